// Hopper attention forward (flash_attention_fwd), version 4k: a dependency-free
// FlashAttention-3 style kernel (WGMMA tensor cores fed by TMA, warp
// specialisation, ping-pong of two consumer warpgroups, persistent blocks)
// for the shapes that fill the GPU, version 1's mma.sync kernel (split
// keys) for the rest, and a decode kernel (mma.sync, keys split between
// its warps) for row groups of at most 32 rows. All are in this file;
// which one runs depends on the shape only.
//
// Dispatch. GQA decode (heads_q > heads_kv, at most 16 queries) and shapes
// of at most 16 queries without GQA (at head_dim 256 only with at least 64
// keys) take the mma.sync kernels with the query heads that share a K/V
// head packed into the rows (below). Otherwise, on a compute capability 9
// device, when batch * heads_q *
// ceil(seqlen_q / 128) query tiles fill at least 80% of one wave of one
// block per SM, the WGMMA kernel runs; with fewer query tiles but
// seqlen_q >= 128 (prefill-like shapes), the WGMMA kernel either splits
// the keys (query tiles x key splits, each split writing fp32 partials
// that a second kernel combines) or runs whole items, whichever an
// estimate of the time favours (WgmmaSplits: waves x tiles per item, plus
// the combine's traffic); otherwise
// (decode-like and short shapes) the mma.sync kernels, which split keys
// the same way, and on other architectures (the WGMMA kernel is empty
// there). Among the mma.sync kernels, the decode kernel takes row groups
// (queries x pack) of at most 32 rows, except GQA shapes at head_dim <= 128
// whose key range it would split while version 1 would split it fewer than
// 12 ways (LaunchMma: measured slower there), and version 1 the others.
//
// head_dim: any multiple of 8 from 64 to 256. Both kernels are compiled for
// D = 64, 128 and 256 columns (the WGMMA kernel also for 192, below), and
// a head_dim runs on the next D up: TMA
// boxes (WGMMA kernel) and cp.async chunks (mma.sync kernel) past head_dim
// are zero-filled, so those columns add nothing to S and give O columns
// that the stores skip; rows in memory are head_dim long (RowElements).
// With head_dim at most 3/4 of D (80/96 on 128, 160/192 on 256) the WGMMA
// kernel computes S over the first 3/4 of the columns only (KD, "narrow
// scores": a quarter of S's wgmma steps skipped); at D = 256 it also
// computes P V and O over those 192 columns only (KSEEK_FA_NARROW_PV).
// By default (KSEEK_FA_D192) head_dim 136-192 takes a WGMMA kernel
// compiled for D = 192 instead (128 x 112 tiles, as FA3's hd192), whose
// loads have no box wholly past head_dim: at D = 256 those boxes made the
// time depend on which physical pages the inputs sat on (two modes 1.27x
// apart; NOTES.md v3j). The scale is 1/sqrt(head_dim).
//
// The WGMMA kernel
//   Work. An item is 128 query rows of one (batch, query head) (192 with
//   three consumers at head_dim 64, below), or with split keys 128 rows
//   and one range of key tiles. The grid
//   is one block per SM (persistent); a block takes items from a queue in
//   a global counter (the first wave by block index), in the order blocks
//   were numbered in version 1: L2 sections of (batch, head) pairs whose
//   K/V fit 16 MB, and under causal masking the heaviest query tiles first
//   within each section. Under causal masking the host simulates the queue
//   for section sizes down to half of that, and one section where all K/V
//   fits 40 MB, and takes the one whose queue ends first
//   (WgmmaSectionPairs; once per shape): sections of 7, 7 and 2 pairs had
//   left the last section's heavy items for the end.
//   The last block to find the queue empty resets the counter, so launches
//   on one stream need no reset; each stream has a counter of its own, and
//   a call captured into a CUDA graph one of its own (Scratch, below), so
//   calls on different streams may run at once.
//   Clusters (KSEEK_FA_CLUSTER): without causal masking, at head_dim 128
//   (not the narrow 80/96 instances), 136-192 and 193-256, with whole items, an
//   even number of query tiles per head and seqlen_q <= seqlen_k, the
//   blocks run in clusters of two (as many as fit at once, 66 on an H200)
//   whose items are pairs of query tiles of one head, in a static order
//   (cluster c takes pairs c, c + clusters, ...; no counter); with causal
//   masking at head_dim 128 where the mean item sees 4096 keys or more
//   (KSEEK_FA_CAUSAL_CLUSTER), from the stream's queue: rank 0's producer
//   takes each pair and hands it to rank 1's through a ring of slots in
//   rank 1's shared memory, each with a full barrier there and an empty
//   one in rank 0 (KSEEK_FA_CAUSAL_CLUSTER_QUEUE). Each block
//   loads every other 64-column block of each K and V tile into both
//   blocks' stages by TMA multicast, so each tile leaves L2 once per pair;
//   a stage's empty barrier counts both blocks' consumer warps (each
//   releases its own block's and, through mapa, the other's), and a
//   block's producer waits every stage's release past its last use before
//   it exits, so no arrival targets a block that has left. At head_dim
//   128 a clustered item walks its key tiles from the last
//   (KSEEK_FA_KEYS_FROM_END_CLUSTER): the partial one, masked, first.
//
//   Warp roles. Warpgroup 0 is the producer (setmaxnreg 24), the others
//   consumers, each owning 64 rows of the item (one m64 WGMMA tile): two
//   (384 threads, setmaxnreg 240), or at head_dim 64 three (512 threads,
//   setmaxnreg 160) when the shape has items for two waves (and its
//   192-row items pad the queries by at most 25% more rows), or its
//   192-row items take clearly fewer rows of waves than 128-row ones, and
//   it is not a short causal one (ThreeConsumers): there the exponentials
//   of the softmax weigh as much as the GEMMs, and a third warpgroup per
//   SM keeps the MUFU and tensor pipes busier.
//
//     head_dim | consumers | keys/tile     | Q buffers | K/V stages | shared memory
//     ---------+-----------+---------------+-----------+------------+--------------
//        64    |  3 or 2   |    128        |     2     |     4      | 201 / 177 KB
//        64    |     2     |  64 or 80 (s) |     2     |     4      | 114 / 130 KB
//       128    |     2     |    128 (c)    |     1     |     2      | 194 KB
//       128    |     2     |    128 (q)    |     2     |     2      | 226 KB
//       128    |     2     |    160 (q)    |     2     |     2      | 224 KB
//       128    |     2     |    176 (w)    |     1     |     2      | 226 KB
//       128    |     2     |  64 or 80 (s) |     2     |     3      | 194 / 218 KB
//       256    |     2     |     80        |     1     |     2      | 225 KB
//       256    |     2     |     64 (s)    |     1     |     2      | 193 KB
//
//   (c) causal masking, and sequences too short for (w); (q) causal up to
//   512 keys and without causal masking up to 4096
//   (KSEEK_FA_HD128_CAUSAL_Q2_UPTO, KSEEK_FA_HD128_FULL_Q2_UPTO), the
//   latter on 160-key tiles where they pad the keys by at most 5% more
//   than 128-key ones (KSEEK_FA_HD128_Q2_BLOCK_N; O in 16-byte stores, no
//   room for the TMA stores' buffers); (w)
//   without causal masking where 176-key tiles pad the keys by at most 5%
//   more than 128-key tiles (WideKeyTiles): fewer, longer tiles per item;
//   (s) seqlen_k <= 64 (<= 80): one short tile per item instead of a
//   128-key one mostly masked (many short sequences); at head_dim 256
//   seqlen_k <= 64 only (longer keys stay on 80-key tiles even where 64
//   would pad them less: measured slower, NOTES.md v4c). With two consumers
//   at head_dim 128, and at 64 on short tiles, the shared memory includes
//   2 KB per consumer warp (or 4 KB: two buffers where they fit) for O's
//   TMA stores (KSEEK_FA_TMA_STORES, KSEEK_FA_TMA_LONG_TILES); on head_dim
//   64's 128-key tiles (two or three consumers) 2 KB per warp for O staged
//   through it.
//
//   Shared memory holds Q (one or two buffers of 128 or 192 rows: with two,
//   the next item's Q, and so its first K/V tiles, load while the
//   consumers still compute this item) and a ring of K/V stages, every tile
//   as 64-column blocks of rows x 128 bytes, 128-byte swizzled (16-byte
//   chunk c of row r at c ^ (r % 8)), 1024-byte aligned: the layout TMA
//   writes and the WGMMA descriptors read (hopper_wgmma_probe.cu checks
//   those descriptors on the device). ptxas: 168 registers at launch; no
//   spills except in the four split-loop instances (below) at head_dim 256
//   (4 bytes each).
//
//   Producer. One thread issues every TMA load (cp.async.bulk.tensor)
//   through three 4-D tensor maps built per call over the BSHD tensors,
//   dimensions (head_dim, heads, seqlen, batch): boxes past seqlen are
//   zero-filled and never reach into the next batch. Per item: Q into
//   buffer n % (Q buffers) for the block's n-th item, once the consumers
//   are done with that buffer's previous item ("Q empty"), announced with
//   the item's index on that buffer's "Q full" (at head_dim 128 each
//   consumer's 64 rows have their own pair: the rows of the consumer
//   ahead in the ping-pong reload as soon as its last S of the item is
//   done, without waiting for the other); then the item's K and V
//   tiles into the ring, K one tile ahead of V (S of tile i is issued with
//   P V of tile i - 1). K and V of a stage have their own "full" and "empty" mbarriers,
//   so S starts when K has landed and K is released as soon as S is done.
//   The ring runs on across items: the next item's tiles load while the
//   consumers finish this one. Past the last item a round with no bytes on
//   "Q full" tells the consumers to stop.
//
//   Every wait on an mbarrier gives the try a suspend-time hint
//   (KSEEK_FA_WAIT_HINT_NS): the waiting thread sleeps until the phase
//   completes, where the producer used to spin (a tenth of the kernel's
//   instructions at head_dim 128).
//
//   Consumers, per key tile i of an item: at head_dim 64 and 128 wait for
//   K(i) (KSEEK_FA_V_AFTER_S), at 192 and 256 test K(i) and V(i - 1)
//   together and wait for the one not yet landed; take
//   the turn (named barriers, a ring over the consumers); issue S = Q K^T
//   (wgmma m64nNk16, N the keys per tile, Q and K from shared memory),
//   at 64 and 128 then wait for V(i - 1), and issue O += P V of tile
//   i - 1 (m64nDk16, P from registers, V MN-major from shared memory; one
//   m64n256k16 per 16 keys at head_dim 256); pass the turn; wait for S and
//   release K(i) (and Q after the item's last S); mask; online softmax in
//   fp32 (maxima, ex2.approx.ftz, sums); wait for P V and release V(i - 1);
//   rescale O (at head_dim 128, 256 and D = 192 only in a warp where a
//   row's reference max moved: it moves when a tile's max passes it by
//   more than 2^8 in P, KSEEK_FA_LAZY_RESCALE, so after the first tiles
//   mostly not at all). At head_dim 64 and 128 (with 80/96), on 128-key
//   tiles and wider, the unmasked tiles after an item's first take the
//   softmax without maxima (KSEEK_FA_SUM_CHECK): P against the rows'
//   references and each lane's sums of the tile, which must stay at most
//   2^8; K(i) is still released right after S (a warp that needs S
//   again reads K from global memory, key block by key block in a
//   rolled loop, KSEEK_FA_SC_K_GLOBAL), and a warp whose test fails
//   moves its rows' references (or, on inf or NaN, computes its S again
//   by mma.sync) after the wait for P V. Then round P to 16 bits in
//   registers (the accumulator layout of S is the A layout of P V).
//   With the 176-key tiles the rescale instead
//   comes just before the next P V is issued, under the next tile's S
//   (KSEEK_FA_RESCALE_UNDER_S; +0.4-0.8%, and -6% at head_dim 64 causal
//   s512, so only there). The first tile (S only) and the last P V are
//   peeled out of the loop, and no wgmma sits in a branch that depends on
//   the tile: otherwise ptxas serialises every wgmma of the kernel. So a
//   consumer also computes tiles past its own rows' causal limits (masked
//   to -inf, they add nothing). Nor is there any branch between the wait
//   for S and the wait for P V: with the mask's test and the lane-0
//   arrivals there as branches, ptxas placed the P V wait before the
//   softmax, so a consumer's P V no longer ran under its own softmax. The
//   arrivals are predicated instructions, and the tiles that need no mask
//   run in a loop of their own, the masked ones in a second (v3h: +6% at
//   head_dim 128 seqlen 16384). The second copy of the loop costs on short
//   items at head_dims 64 and 256, which have instances without it: the
//   split loop is used there for items of at least 32 key tiles, and at 64
//   for every non-causal shape. The wgmma descriptors are a base plus each
//   operand's offset (one add each, not five uniform instructions).
//   Overlap: TMA loads of later tiles and items under everything; one
//   consumer's softmax under the others' GEMMs (ping-pong); a consumer's
//   P V of tile i - 1 under its own softmax of tile i.
//   End of an item: O normalised; at head_dim 64 stored through 2 KB of
//   shared memory per consumer warp (stmatrix, then 16-byte loads and
//   stores of 128-byte row pieces; KSEEK_FA_STAGED_STORES), where the
//   producer also hands the consumers each item's block, not only its index
//   (KSEEK_FA_PUBLISH_WORK): +2-6% there together, neither paid at 128 or
//   256. Elsewhere straight from registers (Q's shared memory may already
//   hold the next item): at head_dim 128 and 256
//   (not with 64-key tiles) each quad of lanes first swaps words so that a
//   lane holds 8 consecutive columns, for 16-byte stores that fill whole
//   sectors (4-byte stores fill half of each); LSE = ln 2 * (max *
//   scale_log2 + log2(sum)); rows that see no key give O = 0, LSE = -inf.
//
//   Masking as in version 1 (below): key positions at or past seqlen_k and,
//   with causal masking, past a row's bottom-right diagonal get -inf on the
//   tiles that cross a consumer's first row's limit; an item's tile range
//   ends at its last row's limit. GQA/MQA through the K/V head index.
//
//   Measured (one NVIDIA H200, 2026-12-01; NOTES.md v3d and v3e) beside
//   FlashAttention-3 (timed with num_splits 1 and 0, the faster kept),
//   cuDNN 9.19 and FA2 in one process on the same inputs, interleaved, with
//   the host's launch work hidden (a 300 us GPU spin after each L2 flush;
//   bench/results/hopper_v3d_pad_sweep_h200.txt: every backend flat from
//   100 us, ours from 0), by
//     PHASES=anchor ANCHOR_KERNEL=kernels/flash_attention_fwd/hopper.cu
//     FA_EVAL_ARGS="--no-timing --scenario-timeout 10" FA_EXTRA=1
//     FA_ANCHOR_ARGS="--budget-s 0.15 --samples 8" bash scripts/device/full_run.sh
//   (all 312 scenarios: bench/results/hopper_v3e_h200.txt, GQA packing on,
//   GQA decode still on the WGMMA kernel where it fills a wave): geomean
//   over the FA3 grid 0.946x FA3 and 1.038x cuDNN (527 TFLOP/s; FA3 557,
//   cuDNN 508); over all 0.883x FA3, 1.135x cuDNN. head_dim 128, seqlen
//   16384, bf16, non-causal: 683 TFLOP/s (FA3 758, cuDNN 667; 86% of the
//   measured 790 bf16 peak). Then with the GQA decode rule, the 48 decode
//   scenarios (FA_SCENARIOS=prefix:decode_;
//   bench/results/hopper_v3e_decode_h200.txt): 0.888x FA3 (was 0.527x in
//   the run above), 1.081x cuDNN; lowest decode_b1_k32768_gqa8_hd256 0.50x
//   FA3. The figures of earlier runs against cuDNN (1.107x over the grid)
//   counted the libraries' host launch work, which timing without the spin
//   adds to their times and not to ours. kseek eval (fresh seeds, no
//   timing), none incorrect: v3d on 244 scenarios, v3e with packing on the
//   165 of the decode, qlong, many-short, heads1, prefill and new head-dim
//   shapes, v3e with the GQA decode rule on 14 decode scenarios (its other
//   34 decode outputs agree with FA3's, cuDNN's and FA2's within 3.1e-3
//   rel L2 in the anchor run), and 27/27 of extra_scenarios.json (head
//   dims 72 ... 248) in each of the three calls. v3f: kseek eval of all 48
//   decode scenarios correct and extra 27/27 with the decode kernel on every
//   decode shape that reached the mma.sync kernels (35 of the 48); the final
//   routing (decode kernel also without GQA; GQA shapes that split keys at
//   head_dim <= 128 back on version 1) then by kseek eval of the decode,
//   many-short and prefill scenarios.
//   Version 3g, one run of all 312 scenarios
//   (bench/results/hopper_v3g_h200.txt, the command above with
//   ANCHOR_TIMEOUT=540 FA_EVAL_TIMEOUT=380; NOTES.md v3g): kseek eval of
//   all 312 correct (fresh seed, no timing), extra_scenarios.json 27/27;
//   0.951x FA3 and 1.036x cuDNN over the FA3 grid (524 TFLOP/s; FA3 551,
//   cuDNN 506), 0.999x FA3 / 1.283x cuDNN over all, decode 1.094x FA3, the head
//   dims other than 64/128/256 0.982x FA3; head_dim 128, seqlen 16384,
//   bf16, non-causal 686 TFLOP/s (FA3 743, cuDNN 658; 87% of the measured
//   790 peak); lowest ragged_s4097_hd128_causal at 0.74x FA3.
//   Version 3h (NOTES.md v3h; bench/results/hopper_v3h_h200.txt,
//   the anchor by the command above without kseek eval, with
//   FA_PAD_SWEEP=0,100,300,1000; kseek eval of all 312 correct in a second
//   call, fresh seed, no timing; extra_scenarios.json 27/27): 0.973x FA3
//   and 1.063x cuDNN over the FA3 grid (534 TFLOP/s; FA3 549, cuDNN 502),
//   1.026x FA3 / 1.311x cuDNN over all; head_dim 128, seqlen 16384, bf16,
//   non-causal 722 TFLOP/s (FA3 713, cuDNN 646 in that run; 91% of the
//   measured 790 peak); lowest prefill_q333_k4097_hd128_full at 0.78x FA3.
//   Version 3i (NOTES.md v3i; bench/results/hopper_v3i_h200.txt,
//   one call: kseek eval of all 312 correct, fresh seed, no timing,
//   extra_scenarios.json 27/27, then the anchor by the command above with
//   FA_PAD_SWEEP=0,100,300,1000): 0.981x FA3 and 1.070x cuDNN over the FA3
//   grid (534 TFLOP/s; FA3 545, cuDNN 499), 1.036x FA3 / 1.329x cuDNN over
//   all, ragged 1.005x, prefill 1.013x FA3; head_dim 128, seqlen 16384,
//   bf16, non-causal 708 TFLOP/s (FA3 722, cuDNN 632; 90% of the measured
//   790 peak); lowest gqa4_hd160_full_s2048 at 0.83x cuDNN (0.99x FA3).
//   Version 3j (NOTES.md v3j; bench/results/hopper_v3j_h200.txt,
//   one call as 3i's): head_dim 136-192 on the D = 192 kernel, +13.5% over
//   those 23 scenarios side by side and stable over the inputs' placement;
//   the other kernels are 3i's. 0.982x FA3 and 1.069x cuDNN over the FA3
//   grid (541 TFLOP/s; FA3 551, cuDNN 506), 1.052x FA3 / 1.344x cuDNN
//   over all, dims 1.147x cuDNN, gqa/mqa 0.992x FA3; head_dim 128, seqlen
//   16384, bf16, non-causal 731 TFLOP/s (FA3 744, cuDNN 666; 93% of the
//   measured 790 peak); 7 scenarios under 0.9x the best of FA3 and cuDNN,
//   lowest decode_b16_k4096_gqa16_hd128 at 0.86x cuDNN. Measured and not
//   kept, so off: FA3's ping-pong and rescale choices (KSEEK_FA_PINGPONG,
//   KSEEK_FA_FIRST_S_TURN, KSEEK_FA_RESCALE_UNDER_S=3), the next item's
//   first S issued with an item's last P V (KSEEK_FA_CHAIN, since
//   removed), other TMA L2 promotions (KSEEK_FA_L2_PROMOTION).
//   Version 3k (NOTES.md v3k; bench/results/hopper_v3k_h200.txt,
//   one call as 3i's): at head_dim 64 and 128 O by TMA stores, the
//   epilogue's reciprocal and log2 on the MUFU unit and the item located
//   by multiplications; head_dim 128 without causal masking up to 4096
//   keys (causal up to 512) on 128-key tiles with two Q buffers, causal
//   head_dim 128 on two K/V stages; GQA decode groups of 17-32 rows at
//   head_dim 64 on one decode block with two row tiles per warp. 1.043x
//   3j side by side over 130 scenarios; 1.000x FA3 and 1.096x cuDNN over
//   the FA3 grid (543 TFLOP/s; FA3 542, cuDNN 495), 1.069x FA3 / 1.370x
//   cuDNN over all; head_dim 128, seqlen 16384, bf16, non-causal 710
//   TFLOP/s (FA3 731, cuDNN 631; 90% of the measured 790 peak); 3
//   scenarios under 0.9x the best of FA3 and cuDNN, lowest
//   decode_b16_k4096_gqa16_hd128 at 0.87x cuDNN. Measured and not kept, so
//   off: the fast epilogue at head_dim 256 (1-4% slower), the mma.sync
//   kernels' splits at the best wave efficiency (KSEEK_FA_SPLIT_KEEP_PCT,
//   KSEEK_FA_LONG_SPLIT_KEEP_PCT), two row tiles at head_dim 128.
//   Version 3l (NOTES.md v3l; bench/results/hopper_v3l_h200.txt,
//   one call as 3i's): the lazy rescale at head_dim 128, 256 and D = 192
//   (a row's softmax reference moves only when a tile's max passes it by
//   more than 2^8 in P, and O's rescale runs only in a warp where a row's
//   moved: KSEEK_FA_LAZY_RESCALE); O without TMA stores on head_dim 64's
//   128-key instances and on the narrow ones (head_dim 80/96). 1.011x FA3
//   and 1.108x cuDNN over the FA3 grid (556 TFLOP/s; FA3 550, cuDNN 502),
//   1.081x FA3 / 1.389x cuDNN over all; head_dim 128, seqlen 16384, bf16,
//   non-causal 742 TFLOP/s (FA3 741, cuDNN 652; 94% of the measured 790
//   peak); 2 scenarios under 0.9x the best of FA3 and cuDNN, lowest
//   decode_b16_k4096_gqa16_hd128 at 0.87x cuDNN. Measured and not kept, so
//   off: the lazy rescale at head_dim 64 (2.4% slower), Q's descriptors
//   derived per tile (KSEEK_FA_Q_DESC_PER_TILE, since removed), a copy
//   of the consumer code per consumer warpgroup (commit f274fe2: 5%
//   slower at 128), two Q buffers on 128-key tiles beyond 4096 keys
//   (non-causal) or 512 (causal) with the lazy rescale too.
//   Version 3m (NOTES.md v3m; bench/results/hopper_v3m_h200.txt,
//   one call as 3i's): the combine after split keys launched as a
//   programmatic dependent of the attention kernel (KSEEK_FA_PDL: decode
//   +2.5%, +9% from 16k keys, split-key prefill +1-3%, side by side);
//   144-key tiles on head_dim 128's two-Q-buffer kernel where they pad
//   the keys by at most 5% more than 128-key ones (ragged +2.3%). 1.014x
//   FA3 and 1.106x cuDNN over the FA3 grid (560 TFLOP/s; FA3 553, cuDNN
//   507), 1.086x FA3 / 1.389x cuDNN over all, head_dim 128 causal 1.003x
//   FA3; head_dim 128, seqlen 16384, bf16, non-causal 743 TFLOP/s (FA3
//   738; 94% of the measured 790 peak). That run had the dependent combine
//   behind the D = 256 kernels too, where it made
//   prefill_q256_k16384_hd256 4-5% slower side by side (0.88x FA3 in the
//   run); the default leaves it out there (KSEEK_FA_PDL=11: those kernels'
//   cubins are byte for byte a -DKSEEK_FA_PDL=0 build's, the others' the
//   measured build's). Measured and not kept, so off (both since
//   removed): the lazy rescale's bound in raw score units
//   (KSEEK_FA_LAZY_RAW_BOUND), four splits in flight or a block per row
//   behind version 1 (KSEEK_FA_MMA_COMBINE).
//   Version 3n (NOTES.md v3n; bench/results/hopper_v3n_h200.txt,
//   one call as 3i's): the dependent combine behind every kernel but
//   D = 256's (KSEEK_FA_PDL=11, now measured: prefill_q256_k16384_hd256
//   as with the plain launch); GQA decode groups of at most 16 rows on
//   the decode kernel's long splits from 2 splits of version 1
//   (KSEEK_FA_DECODE_GQA_MIN_SPLITS, by the group's rows: +1-19% on the
//   six shapes it moves); at D = 256 and D = 192, O of items of 32 or more
//   key tiles by TMA stores staged in the last tile's V
//   (KSEEK_FA_TMA_IN_V), and items located by multiplications at head_dim
//   256 (KSEEK_FA_FAST_LOCATE=7): 1.014x over head_dim 160-256 side by
//   side. 1.013x FA3 and 1.110x cuDNN over the FA3 grid (555 TFLOP/s; FA3
//   548, cuDNN 500), 1.092x FA3 / 1.396x cuDNN over all, head_dim 256
//   causal 1.020x FA3; head_dim 128, seqlen 16384, bf16, non-causal 744
//   TFLOP/s (FA3 746; 94% of the measured 790 peak); no scenario under
//   0.9x the best of FA3 and cuDNN (lowest decode_b1_k32768_gqa1_hd128 at
//   0.93x cuDNN). Measured and not kept, so off: the staged stores for
//   every item (KSEEK_FA_TMA_IN_V_MIN_TILES=0: many-short 0.93x), their V
//   released after the next item's first S (KSEEK_FA_TMA_IN_V_DEFER,
//   since removed).
//   Version 3o (NOTES.md v3o; bench/results/hopper_v3o_h200.txt,
//   one call as 3i's, kseek eval in a second): clusters of two blocks with
//   K/V TMA multicast without causal masking at head_dim 128 and on the
//   D = 256 kernel (KSEEK_FA_CLUSTER=6, "Work" above), as FA3: 7% less
//   energy per FLOP at hd128 s1024 run back to back (1236-1251 J/PFLOP
//   against FA3's 1252-1275), +1-4% side by side at s512-s4096. 1.023x FA3
//   and 1.115x cuDNN over the FA3 grid (559 TFLOP/s; FA3 547, cuDNN 501),
//   1.089x FA3 / 1.396x cuDNN over all; head_dim 128 non-causal 0.996x FA3
//   (v3n 0.969), 256 non-causal 1.016x (v3n 0.991); head_dim 128, seqlen
//   16384, bf16, non-causal 737 TFLOP/s (FA3 732; 93% of the measured 790
//   peak); no scenario under 0.9x the best of FA3 and cuDNN (lowest
//   decode_b4_k16384_gqa8_hd128 at 0.92x cuDNN). Off: the D = 192 kernel
//   in clusters (KSEEK_FA_CLUSTER bit 8) and the key tiles walked from the
//   end, both emulated, not yet timed.
//   Version 3p (NOTES.md v3p; bench/results/hopper_v3p_h200.txt):
//   the D = 192 kernel in clusters too (KSEEK_FA_CLUSTER=14) and the key
//   tiles walked from the end in head_dim 128's cluster instances
//   (KSEEK_FA_KEYS_FROM_END_CLUSTER=2). 1.024x FA3 and 1.117x cuDNN over
//   the FA3 grid (562 TFLOP/s; FA3 549, cuDNN 503), 1.090x FA3 over all;
//   head_dim 128 non-causal 0.998x FA3; head_dim 128 s16384 bf16
//   non-causal 750 TFLOP/s (FA3 738; 95% of 790); lowest
//   decode_q4_k16000_hd128_gqa8_causal 0.90x FA3.
//   Version 3q (NOTES.md v3q; bench/results/hopper_v3q_h200.txt):
//   K/V loads marked evict-last in head_dim 128's cluster instances
//   (KSEEK_FA_TMA_CACHE_HINT_CLUSTER=2). 1.023x FA3 and 1.116x cuDNN over
//   the FA3 grid (561 TFLOP/s; FA3 548, cuDNN 502), 1.094x FA3 / 1.400x
//   cuDNN over all; head_dim 128 non-causal 0.999x FA3 (s512-s4096
//   0.982-0.999, s8192-s16384 1.012-1.021); head_dim 128 s16384 bf16
//   non-causal 756 TFLOP/s (FA3 741; 96% of 790); no scenario under 0.93x
//   the best of FA3 and cuDNN (lowest decode_b64_k2048_gqa8_hd96 and
//   decode_b1_k32768_gqa1_hd128 at 0.935x cuDNN).
//   Version 3r (NOTES.md v3r; bench/results/hopper_v3r_h200.txt):
//   head_dim 128's two-Q-buffer kernel on 160-key tiles where they pad at
//   most 5% more than 128-key ones (KSEEK_FA_HD128_Q2_BLOCK_N=160: the
//   grid's s2048 and s4096, GQA s2048). 1.024x FA3 and 1.118x cuDNN over
//   the FA3 grid (561 TFLOP/s; FA3 549, cuDNN 502), 1.091x FA3 / 1.398x
//   cuDNN over all, every class at or above 1.0x FA3: head_dim 128
//   non-causal 1.003x (s512-s1024 0.983-0.996, s2048 1.000, s4096-s16384
//   1.008-1.019), causal 1.002x (s2048-s16384 0.981-0.986); head_dim 128
//   s16384 bf16 non-causal 735 TFLOP/s (FA3 729; 93% of 790); no scenario
//   under 0.9x the best of FA3 and cuDNN (lowest
//   decode_b1_k32768_gqa1_hd128 at 0.917x cuDNN). Since that run, head_dim
//   64's three consumers only where their 192-row items pad by at most 25%
//   more rows (KSEEK_FA_HD64_THREE_PAD_PCT: 193-256 queries take two, 1.2x
//   there; no task shape moves).
//   Version 3s (NOTES.md v3s; bench/results/hopper_v3s_h200.txt):
//   at head_dim 64 and 128 a consumer issues a step's S once K has landed
//   and waits for V only before the P V (KSEEK_FA_V_AFTER_S=3, FA3's
//   order). 1.028x FA3 and 1.125x cuDNN over the FA3 grid (566 TFLOP/s;
//   FA3 551, cuDNN 503), 1.099x FA3 / 1.408x cuDNN over all, every class at
//   or above 1.0x FA3: head_dim 128 non-causal 1.011x (s512-s2048
//   0.995-1.006, s4096-s16384 1.012-1.032), causal 1.011x (s2048-s16384
//   0.987-0.995); head_dim 128 s16384 bf16 non-causal 773 TFLOP/s (FA3
//   749; 98% of 790); no scenario under 0.93x the best of FA3 and cuDNN
//   (lowest decode_b64_k2048_gqa8_hd96 at 0.930x cuDNN).
//   Version 3t (NOTES.md v3t; bench/results/hopper_v3t_h200.txt):
//   the K/V ring's stage and phase computed unsigned, and at head_dim 64
//   the key tiles that need no mask skip the test for a row without keys
//   (KSEEK_FA_RING_UNSIGNED=1, KSEEK_FA_UNMASKED_NO_INF_TEST=1). 1.031x FA3
//   and 1.128x cuDNN over the FA3 grid (569 TFLOP/s; FA3 552, cuDNN 504),
//   1.096x FA3 / 1.408x cuDNN over all; head_dim 64 non-causal 1.090x
//   (s8192-s16384 1.006-1.023), causal 1.047x (s2048 0.979-0.980,
//   s4096-s16384 1.010-1.017); no scenario under 0.91x the best of FA3 and
//   cuDNN (lowest decode_b4_k16384_gqa8_hd128 at 0.911x cuDNN; 0.950x FA3).
//   Version 3u (NOTES.md v3u; bench/results/hopper_v3u_h200.txt): the
//   WGMMA producer asks the queue for its next item before it waits for
//   its item's last V stage (KSEEK_FA_EARLY_NEXT=1). 1.031x FA3 and 1.128x
//   cuDNN over the FA3 grid, 1.098x FA3 over all; head_dim 128 causal
//   1.015x (v3t 1.010x).
//   Version 3v (NOTES.md v3v; bench/results/hopper_v3v_h200.txt):
//   the split loop at head_dim 64 (causal) for items of 8 or more key
//   tiles and on the D = 192 kernel for every item (it was 32 or more
//   there; head_dim 256 keeps 32). 1.036x FA3 and 1.133x cuDNN over the FA3
//   grid (576 TFLOP/s; FA3 556, cuDNN 508), 1.102x FA3 / 1.416x cuDNN over
//   all; head_dim 64 causal 1.060x (s2048 1.019-1.022x, v3t 0.98x);
//   head_dim 128 s16384 bf16 non-causal 780 TFLOP/s (FA3 753); lowest
//   against the best of FA3 and cuDNN decode_b1_k32768_gqa8_hd128 at
//   0.925x cuDNN, then prefill_q256_k16384_hd256 causal at 0.927x FA3.
//   Version 3w (NOTES.md v3w; bench/results/hopper_v3w_h200.txt): at head
//   dim 128 and on the D = 192 kernel the combine may launch only once the
//   blocks' producers have found the queue empty (KSEEK_FA_PDL_LATE=10).
//   1.037x FA3 over the FA3 grid, 1.102x over all, prefill 1.052x.
//   Version 3x (NOTES.md v3x; bench/results/hopper_v3x_h200.txt):
//   behind head_dim 256's split keys the combine is a programmatic
//   dependent that the attention kernel never lets launch early
//   (KSEEK_FA_PDL_END=4): it starts as the last attention block exits,
//   0.2-0.5 us after it (a plain launch 1.7-2.5 us; an early launch left
//   its first blocks crowded on the SMs the attention kernel left idle).
//   1.035x FA3 and 1.133x cuDNN over the FA3 grid (572 TFLOP/s; FA3 552,
//   cuDNN 505), 1.105x FA3 / 1.417x cuDNN over all, prefill 1.062x;
//   prefill_q256_k16384_hd256 1.007-1.022x FA3 (v3v 0.924-0.960x); lowest
//   against the best of FA3 and cuDNN decode_b64_k2048_gqa8_hd96 at
//   0.925x cuDNN.
//   Version 3y (NOTES.md v3y; bench/results/hopper_v3y_h200.txt):
//   items without causal masking at the D = 128 kernel take L2 sections of
//   8 MB of K/V (about one wave of items), not 16
//   (KSEEK_FA_FULL_L2_SECTION_DIMS=2). 1.036x FA3 and 1.131x cuDNN over the
//   FA3 grid (576 TFLOP/s; FA3 555, cuDNN 509), 1.104x FA3 / 1.418x cuDNN
//   over all; head_dim 128 non-causal 1.013x (s512 1.015-1.020x, v3x
//   0.998-1.006x); head_dim 128 s16384 bf16 non-causal 767 TFLOP/s (FA3
//   744); lowest against the best of FA3 and cuDNN
//   decode_b4_k16384_gqa8_hd128 at 0.897x cuDNN (0.92-0.97x in the four
//   runs before, the same decode code).
//   Version 3z (NOTES.md v3z; bench/results/hopper_v3z_h200.txt):
//   the combine behind the decode kernel a block per row from 5 splits,
//   not 16 (KSEEK_FA_DECODE_ROW_COMBINE_MIN_SPLITS=5; the kernels' PTX is
//   3y's): decode_b4_k16384_gqa8_hd128's call 26.4 us on the GPU's
//   timeline against 27.7-28.2 (cuDNN 28.2). 1.033x FA3 and 1.131x cuDNN
//   over the FA3 grid (566 TFLOP/s; FA3 548, cuDNN 500), 1.102x FA3 /
//   1.412x cuDNN over all, every class at or above 1.0x FA3; no scenario
//   under 0.9x the best of FA3 and cuDNN (lowest
//   decode_b16_k4096_gqa16_hd128 at 0.914x cuDNN,
//   decode_b4_k16384_gqa8_hd128 0.943x); head_dim 128 s16384 bf16
//   non-causal 753 TFLOP/s (FA3 734).
//   Version 4 (NOTES.md v4; bench/results/hopper_v4_h200.txt):
//   head_dim 80/96 (136-192) take the decode kernel's and version 1's
//   narrow instances at D = 128 (256): S, P V and O's rescale over 3/4 of
//   D (KSEEK_FA_DECODE_NARROW=6). decode_b64_k2048_gqa8_hd96 (version 1)
//   20.07 TFLOP/s against v3z's 19.19, 0.987x the best of FA3 and cuDNN
//   (v3z 0.931x). 1.035x FA3 and 1.128x cuDNN over the FA3 grid (565
//   TFLOP/s; FA3 546, cuDNN 501), 1.107x FA3 / 1.412x cuDNN over all,
//   every class at or above 1.0x FA3; no scenario under 0.9x the best
//   (lowest decode_b1_k32768_gqa8_hd128 at 0.916x cuDNN, the same code
//   as v3z's 0.935x); head_dim 128 s16384 bf16 non-causal 754 TFLOP/s
//   (FA3 729).
//   Version 4a (NOTES.md v4a): each call's scratch its own (CallScratch:
//   the WGMMA queue per stream, split partials from a stream-ordered
//   pool, a graph's own when captured), passed to the kernels as their
//   last parameter, instead of __device__ globals that every call shared:
//   calls on several streams at once, and graphs launched beside them,
//   are correct (tests/fa_streams/streams_check.cu: v4 differed in 62 of
//   198 outputs, v4a in none). The kernels' code is v4's but for the
//   scratch's addresses; GPU time as v4's (1.000x over 34 scenarios on an
//   H100). On an H100 (bench/results/hopper_v4a_h100.txt): 1.040x FA3 and
//   1.123x cuDNN over the FA3 grid, 1.100x FA3 / 1.386x cuDNN over all,
//   every class at or above 1.0x FA3. But under the harness's sandbox
//   every split-key call failed: the pool's memory could not be
//   allocated there (an open for writing, which the filter refuses).
//   Version 4b (NOTES.md v4b): calls that are not captured
//   take their split partials from a buffer of their stream's own
//   (cudaMalloc, grown as needed; at most 16 streams keep one), no memory
//   pool; captured calls as in 4a. The mma.sync and decode kernels'
//   combine launched as their grid ends (KSEEK_FA_MMA_PDL_END=7: decode
//   1.024x on an H100). On an H100 (bench/plans/final_v4b.sh,
//   bench/results/hopper_v4b_h100.txt): all 312 scenarios and 27 extra
//   ones correct by kseek eval in the sandbox; 1.041x FA3 and 1.120x cuDNN
//   over the FA3 grid (561 TFLOP/s; FA3 539, cuDNN 501), 1.114x FA3 /
//   1.389x cuDNN over all, every class at or above 1.0x FA3, nothing under
//   0.95x the best of FA3 and cuDNN; head_dim 128 s16384 bf16 non-causal
//   756 TFLOP/s (FA3 731); streams_check all 486 outputs matching; host
//   time per call 6-10 us (v4a 7-14).
//   Version 4c (NOTES.md v4c): head_dim 193-256 with seqlen_k
//   <= 64 on one 64-key tile per item instead of an 80-key one (many
//   short sequences: +6-7% at s32, +12-13% at s8 on an H100). 64-key tiles
//   where 80-key ones pad more keys (s512: 560 computed for 512; causal
//   s512-s1024) measured 1-13% slower there, and stay off. On an H100
//   (bench/plans/final.sh, bench/results/hopper_v4c_h100.txt): all 312
//   scenarios and 27 extra ones correct by kseek eval in the sandbox;
//   1.043x FA3 and 1.142x cuDNN over the FA3 grid (563 TFLOP/s; FA3 540,
//   cuDNN 493), 1.128x FA3 / 1.405x cuDNN over all, every class at or
//   above 1.0x FA3, nothing under 0.95x the best of FA3 and cuDNN (lowest
//   grid_hd256_causal_s512 0.956 by the timeline, against cuDNN); head_dim
//   128 s16384 bf16 non-causal 771 TFLOP/s (FA3 731), about the 762-768
//   TFLOP/s the same GPU's 8192^3 bf16 matmul measured around the run.
//   On the H200 (the same command, bench/results/hopper_v4c_h200.txt):
//   all correct in the sandbox; 1.035x FA3 and 1.130x cuDNN over the FA3
//   grid (565 TFLOP/s; FA3 546, cuDNN 500), 1.115x FA3 / 1.422x cuDNN
//   over all, every class at or above 1.012x FA3, lowest against the best
//   decode_q4_k16000_hd128_gqa8_causal 0.952 (FA3); head_dim 128 s16384
//   bf16 non-causal 743 TFLOP/s (FA3 717), 96% of the matmul's 774.
//   The producer asking L2 for K/V tiles ahead of their loads
//   (cp.async.bulk.prefetch.tensor) lost 8-13% overall (up to 25% on short
//   causal rows) and was removed.
//   Version 4d (NOTES.md v4d): head_dim 128 with causal
//   masking on the 176-key tiles of the non-causal shapes where the mean
//   item sees at least 6144 keys (KSEEK_FA_HD128_CAUSAL_WIDE_KEYS): on an
//   H100, +0.5-1.5% on the 8 task scenarios that take them (grid s16384,
//   prefill q1000 k8192 and q2048 k16384, long s32768), a loss of 0.5-0.9%
//   where the mean is 4096 (grid s8192). O staged by TMA in the Q buffer
//   at head_dim 256 (to shorten the s512 rows' register stores) measured
//   1.5-4% slower at s512-s2048 and was not kept. Final run on an H100
//   (bench/results/hopper_v4d_h100.txt): all correct in the sandbox,
//   1.041x FA3 and 1.123x cuDNN over the FA3 grid (561.5 TFLOP/s), 1.105x
//   FA3 / 1.392x cuDNN over all, every class at or above 1.008x FA3;
//   head_dim 128 s16384 bf16 non-causal 768 TFLOP/s (FA3 745), 97% of the
//   same GPU's matmul. Causal items in clusters (KSEEK_FA_CAUSAL_CLUSTER):
//   0.62-0.64x on the grid's causal rows (the static order), off.
//   Version 4e (NOTES.md v4e; KSEEK_FA_TAIL_SPLIT=6): the
//   wave's tail in even shares of the last rounds' key tiles over the
//   clusters, at head_dim 128 and 256 (below): on an H100 beside v4d in
//   one run, grid head_dim 128 non-causal s4096 +1.8%, s8192 +1.2%,
//   s16384 +1.8% (bf16; +1.4% f16), head_dim 256 s16384 +1.6%, the other
//   35 rows of the call within 0.3%. Final run on an H100
//   (bench/results/hopper_v4e_h100.txt): all 312 scenarios and 27 extra
//   ones correct by kseek eval in the sandbox, 1.043x FA3 and 1.128x
//   cuDNN over the FA3 grid (566.8 TFLOP/s), 1.107x FA3 / 1.396x cuDNN
//   over all, every class at or above 1.017x FA3; head_dim 128 s16384
//   bf16 non-causal 778 TFLOP/s (FA3 746), 256 s16384 848 (FA3 809).
//   Version 4f (NOTES.md v4f): head_dim 128's causal pairs in
//   clusters of two where the mean item sees at least 6144 keys (the
//   176-key tiles; KSEEK_FA_CAUSAL_CLUSTER=2), taken from a queue per
//   cluster (KSEEK_FA_CAUSAL_CLUSTER_QUEUE: rank 0's producer takes the
//   pair and hands it to rank 1's through slots in rank 1's shared
//   memory). On an H100 beside v4e in one run: grid causal s16384 +2.9%
//   (bf16) and +3.2% (f16), prefill q2048 k16384 +3.5%, q1000 k8192 +3.7%,
//   long_single +2.8%; shorter rows lost in clusters (s1024 -6%, s4096
//   -1%) and stay on single blocks. Final run on an H100
//   (bench/results/hopper_v4f_h100.txt; a slower one, its matmul at 766
//   TFLOP/s): all 312 scenarios and 27 extra ones correct by kseek eval in
//   the sandbox, 1.041x FA3 and 1.127x cuDNN over the FA3 grid, 1.106x
//   FA3 / 1.392x cuDNN over all, every class at or above 1.015x FA3
//   (grid head_dim 128 causal 1.041x, v4e's 1.036x); grid head_dim 128
//   causal s16384 1.023-1.026x FA3 (v4e's run 0.992-0.994x).
//   Version 4g (NOTES.md v4g): the causal pairs' clusters and
//   their 176-key tiles from 4096 mean keys instead of 6144
//   (KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS, KSEEK_FA_HD128_CAUSAL_WIDE_KEYS):
//   grid causal s8192 +1.7-2.1% on an H100 beside v4f in one run. Final
//   run on an H100 (bench/results/hopper_v4g_h100.txt): all 312 scenarios
//   and 27 extra ones correct by kseek eval in the sandbox, 1.044x FA3 and
//   1.128x cuDNN over the FA3 grid, 1.107x FA3 / 1.394x cuDNN over all,
//   every class at or above 1.017x FA3; grid head_dim 128 causal s8192
//   1.003-1.009x FA3 (v4f's run 0.989-0.993x).
//   Version 4h (NOTES.md v4h): the same clusters and tiles from
//   3072 mean keys: prefill q333 k4097 head_dim 128 causal +3.1% (bf16),
//   its gqa4 f16 row +1.7%, grid causal s4096 unchanged, on an H100 beside
//   v4g in one run (NOTES.md "After v4g"). Final run on an H100
//   (bench/results/hopper_v4h_h100.txt): all 312 scenarios and 27 extra
//   ones correct by kseek eval in the sandbox, 1.048x FA3 and 1.128x
//   cuDNN over the FA3 grid (564.8 TFLOP/s), 1.119x FA3 / 1.403x cuDNN
//   over all, every class at or above 1.018x FA3.
//   Version 4i (NOTES.md v4i): at head_dim 128 (and its narrow
//   80/96) the consumers hold Q in registers in the two-Q-buffer instances
//   on 128-key tiles (KSEEK_FA_Q_REGS=2, KSEEK_FA_Q_REGS_MIN_N=128):
//   +0.6-1.7% on head_dim 128 full s512-s1024, ragged s100-s1000 and
//   qlong_q1024_k512, no row lower, on an H100 beside v4h in one run
//   (bench/results/q_regs_check_h100.txt). Final run on an H100
//   (bench/results/hopper_v4i_h100.txt): all 312 scenarios and 27 extra
//   ones correct by kseek eval in the sandbox, 1.045x FA3 and 1.128x
//   cuDNN over the FA3 grid (568.9 TFLOP/s), 1.108x FA3 / 1.397x cuDNN
//   over all (v4h's run 1.119x, about 1% of it two rows where FA3 and
//   cuDNN both ran 2-5x slow in that run), every class at or above
//   1.019x FA3.
//   Version 4j (NOTES.md v4j): the unmasked key tiles after an
//   item's first take the softmax without maxima at head_dim 64 and 128
//   (KSEEK_FA_SUM_CHECK=3): no FMNMX, shuffle, alpha or rescale of O per
//   tile while every lane's sums of P against the rows' references stay
//   at most 2^8. Beside v4i on 120 scenarios on an H100
//   (bench/results/sum_check_h100.txt): head_dim 64 +3.5% (grid s4096 to
//   s16384 +5-6%), 80/96 +2%, 128 +0.2%, 256 unchanged. Final run on an
//   H100 (bench/results/hopper_v4j_h100.txt): all 312 scenarios and 27
//   extra ones correct by kseek eval in the sandbox, 1.059x FA3 and
//   1.149x cuDNN over the FA3 grid (572.2 TFLOP/s), 1.116x FA3 / 1.414x
//   cuDNN over all, every class at or above 1.016x FA3; head_dim 64
//   s16384 bf16 non-causal 615.7 TFLOP/s (FA3 573.6), head_dim 128 790.7
//   (FA3 746.8, the GPU's bf16 matmul 788-793).
//   Version 4k (NOTES.md v4k): the sum check's S again reads
//   K from global memory (KSEEK_FA_SC_K_GLOBAL=1), so the tile's K stage
//   is released right after S as before v4j, and at head_dim 128 (with
//   80/96) a warp whose test passed releases Q (on the item's last tile)
//   right after the test (KSEEK_FA_SC_EARLY_RELEASE=2). Beside v4j on 47
//   rows on an H100 (bench/results/sum_check4_h100.txt): +0.8%, grid
//   head_dim 128 +2%, head_dim 64 full s512 +5%; one-tile items (ragged
//   s100) and head_dim 80/96 s1024 -3.5%, heads1 head_dim 128 full -6%
//   (sum_check5_h100.txt: S again's unrolled code in the key-tile loops,
//   KSEEK_FA_SC_K_GLOBAL=2 rolls it). Final run on an H100
//   (bench/results/hopper_v4k_h100.txt): all 312 scenarios and 27 extra
//   ones correct by kseek eval in the sandbox, 1.069x FA3 and 1.152x
//   cuDNN over the FA3 grid (583.6 TFLOP/s), 1.124x FA3 / 1.416x cuDNN
//   over all, every class at or above 1.018x FA3; head_dim 64 s16384
//   bf16 non-causal 611.5 TFLOP/s (FA3 575.8), head_dim 128 831.3 (FA3
//   754.0, the GPU's bf16 matmul 790-803).
//   Version 4l (this file; NOTES.md v4l): S again runs in a rolled loop
//   over the tile's 8-key blocks (KSEEK_FA_SC_K_GLOBAL=2), so the key-tile
//   loops are back to v4j's length (v4k's unrolled form made them 1.7-1.9x
//   longer). Its first form beside v4k on 22 rows on an H100
//   (bench/results/sum_check6_h100.txt): +1.5%, one-tile items (ragged
//   s100) +3.9%, heads1 +2%. Final run on an H100
//   (bench/results/hopper_v4l_h100.txt): all 312 scenarios and 27 extra
//   ones correct by kseek eval in the sandbox, 1.070x FA3 and 1.158x
//   cuDNN over the FA3 grid (579.5 TFLOP/s), 1.126x FA3 / 1.422x cuDNN
//   over all, every class at or above 1.014x FA3; head_dim 64 s16384
//   bf16 non-causal 621.6 TFLOP/s (FA3 585.9), head_dim 128 817.3 (FA3
//   742.6, the GPU's bf16 matmul 784-785).

// The mma.sync kernel (version 1)
//   Tiles. One block of 8 warps (256 threads) owns 128 rows of one (batch,
//   row group); each warp owns 16 of them for the whole kernel. A row
//   group is one query head (row m = query m) or, with GQA, the pack =
//   heads_q / heads_kv query heads that share a K/V head (row m = query
//   m / pack of the group's head m % pack): so the rows of a decode step
//   fill a warp's m16 tile instead of one row in sixteen, and each K/V
//   head is read once per block instead of once per query head. The block
//   walks its key range in tiles of 64 keys.
//
//     head_dim | Q in          | K/V stages | shared memory | blocks/SM | warps/SM
//     ---------+---------------+------------+---------------+-----------+---------
//        64    | registers     |     3      |   64 KB       |     2     |   16
//       128    | registers     |     3      |  128 KB       |     1     |    8
//       256    | shared memory |     2      |  192 KB       |     1     |    8
//
//   Blocks per SM are bound by registers (the fp32 O accumulator is head_dim
//   / 2 registers per thread; ptxas: 128, 233 and 255 registers, no spills);
//   at head_dim 256 Q stays in shared memory and is read with ldmatrix for
//   every key tile so that O, S and P fit.
//   Shared memory rows are head_dim 16-bit elements in 16-byte chunks;
//   chunk c of row r is stored at chunk c ^ (r % 8), so the eight row
//   addresses of every ldmatrix phase hit eight different bank groups.
//
//   Pipeline. Q (one cp.async group) and the first `stages - 1` K/V tiles
//   are issued up front. Iteration j waits for tile j, synchronises the
//   block once, issues tile j + stages - 1 into the stage tile j - 1 used,
//   then computes on tile j: the asynchronous copies fill the next tiles
//   while the tensor cores work on this one. No warp roles: every warp
//   loads, computes and stores. Two warps per SM sub-partition (four at
//   head_dim 64) let one warp's softmax overlap another's MMAs.
//
//   Per tile and warp: S = Q K^T with mma.sync m16n8k16 (16-bit inputs,
//   fp32 accumulate; K fragments by ldmatrix, V fragments by
//   ldmatrix.trans); mask where needed; online softmax in fp32 with exp2
//   and the scale log2(e)/sqrt(head_dim) applied to fp32 scores; P is
//   rounded to the input type in registers and used directly as the A
//   operand of O += P V (the m16n8k16 accumulator layout of two adjacent
//   8-key tiles is the A layout of one 16-key step). At the end each warp
//   stages its 16 rows of O through its own (dead) Q rows of shared memory
//   for 16-byte stores, and writes LSE = ln 2 * (max * scale_log2 +
//   log2(sum)).
//
//   Masking. Key positions at or past seqlen_k, and under causal masking
//   keys j > i + seqlen_k - seqlen_q (bottom-right), get -inf; only tiles
//   that cross a warp's limit are masked, and a warp skips the MMAs of a
//   tile none of its rows sees (its rows past seqlen_q, or past the
//   diagonal). A row that sees no key keeps max = -inf and sum = 0 and is
//   written as O = 0, LSE = -inf. Loads past seqlen_q or seqlen_k are
//   zero-filled by cp.async; stores are predicated on the row.
//
//   Scheduling. Blocks are numbered so that consecutive blocks share K/V:
//   (batch, head) pairs are grouped into L2 sections whose K/V fit in
//   16 MB; inside a section the query tile is the slow index and the pair
//   the fast one, and with causal masking the heaviest query tiles (the
//   last ones) come first. GQA/MQA: query head h reads key/value head
//   h / (heads_q / heads_kv).
//
//   Split keys (flash-decoding). When the blocks would fill less than 80%
//   of one wave (few query tiles: decode-like and short shapes), the key
//   tiles are split over `splits` blocks per query tile (up to 32; 128 in
//   the decode kernel; at least 4 key tiles each; the split
//   count picked for the best wave
//   efficiency). Each split writes its normalised partial O (fp32) and its
//   LSE to scratch memory of the call's own (allocated on its stream from
//   a pool the kernel keeps per device, freed on it after the combine:
//   CallScratch); a second kernel, one warp per
//   row (a block per row after 5 or more splits of the decode kernel),
//   combines them: lse = log sum exp(lse_s), O = sum exp(lse_s - lse)
//   O_s. The split count is lowered until the partials take at most 32 MB
//   of O.
//
//   Measured with version 1 alone on every shape (NVIDIA H200, 2026-11-30,
//   scripts/device/full_run.sh phase anchor with
//   ANCHOR_KERNEL=kernels/flash_attention_fwd/hopper.cu; NOTES.md v1):
// correct on all 236 scenarios and the 18 of extra_scenarios.json; 313
// TFLOP/s at head_dim 128, seqlen 16384, bf16, non-causal (cuDNN 688, FA2
// 345 in the same run); geomean 0.51x cuDNN / 0.93x FA2 over the FA3 grid,
// 0.73x cuDNN / 0.98x FA2 over all scenarios.

// The decode kernel (version 3f)
//   Work. One block of 4 warps per 16 rows of a row group (as in version 1:
//   the pack query heads of one K/V head times the queries; 32 rows take
//   two blocks, which read the same K/V) and key split. Every warp holds
//   all 16 rows (one m16 tile, Q in registers at head_dim 64/128, in
//   shared memory at 256) and takes every fourth chunk of 16 keys of the
//   block's range, so the four warps stream K/V at once where version 1
//   has one busy warp of eight.
//
//     head_dim | stages per warp | shared memory | blocks/SM (ptxas registers)
//     ---------+-----------------+---------------+----------------------------
//        64    |        4        |    66 KB      |   3 (102)
//       128    |        3        |   100 KB      |   2 (190)
//       256    |        3        |   200 KB      |   1 (239)
//
//   Pipeline. Each warp has its own cp.async ring of 16-key K/V chunks and
//   waits with cp.async.wait_group and __syncwarp only: no block barrier in
//   the key loop. Per chunk: S = Q K^T (m16n8k16), masking where the
//   chunk crosses a row's limit, online softmax, O += P V, as version 1.
//   Merge. The warps' unnormalised O, maxima and sums go to shared memory
//   (over the rings); each thread then combines 8 columns of one row over
//   the four warps and stores O (16-byte stores) and LSE, or, with split
//   keys, the split's normalised fp32 partial and LSE for CombineSplits
//   (up to 128 splits; lane l of its warp reads the LSEs of splits l,
//   l + 32, ...).
//
//   Measured (one NVIDIA H200, 2026-12-01; NOTES.md v3f,
//   bench/results/hopper_v3f_decode_variants_h200.txt), side by side with
//   version 3e in one run: 1.14x v3e over the 48 decode scenarios (1.26x
//   cuDNN; v3e 1.10x), batch-1024 128-key GQA decode 1.74-1.88x, head_dim
//   256 decode 1.32x; slower (0.70-0.96x) on GQA shapes at head_dim <= 128
//   that split keys.
//   Long splits (version 3g). GQA shapes at head_dim <= 128 that version 1
//   would split at least 12 ways (batch 1-4 with 16-32k keys) take the
//   decode kernel with splits planned for one block per SM (at most 64, of
//   at least 8 key tiles each: fewer, longer splits than for its 2-3 blocks
//   per SM), and with 5 or more splits CombineSplits runs a block per row
//   (warp w of 8 takes splits w, w + 8, ..., four loads in flight; a
//   shared-memory sum) instead of a warp walking every split. Measured
//   side by side with 3f (bench/results/hopper_v3g_variants_h200.txt):
//   batch-1 32k-key GQA decode 1.17-1.88x, batch-4 16k-key GQA 8 / 16
//   1.04 / 1.27x; the other GQA shapes that split keys at head_dim <= 128
//   (2-7 splits of version 1) stay on version 1.
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include <mutex>
#include <queue>
#include <type_traits>
#include <vector>

#include "kernelseek/abi.h"

// Tuning switches (compile-time; the defaults are the measured best, or
// off for a path not yet measured on the device; NOTES.md says which
// measurement chose each, and how to measure the others):
//   KSEEK_FA_FAST_EXP2          1: exponentials with ex2.approx.ftz; 0: exp2f
//   KSEEK_FA_HD256_BLOCK_N      keys per tile of the WGMMA kernel at head_dim
//                               256 (64 or 80; 2 stages)
//   KSEEK_FA_PV_N256            1: P V at head_dim 256 as one m64n256k16 per
//                               16 keys; 0: two m64n128k16
//   KSEEK_FA_HD64_CONSUMERS     consumer warpgroups of the WGMMA kernel at
//                               head_dim 64: 0 picks 2 or 3 by shape
//                               (ThreeConsumers), 2 or 3 forces it
//   KSEEK_FA_HD64_THREE_PAD_PCT with 0 above and items for two waves: three
//                               consumers only where their 192-row items
//                               pad seqlen_q by at most this many percent
//                               more rows than 128-row items do (default
//                               25: 193-256 queries take two; NOTES.md v3r)
//   KSEEK_FA_WGMMA_SPLIT_KEYS   1 (default): shapes with few query tiles
//                               (seqlen_q >= 128) split keys in the WGMMA
//                               kernel (or run whole items there, see
//                               KSEEK_FA_SPLIT_COST); 0: they run on the
//                               mma.sync kernel
//   KSEEK_FA_HD64_Q_BUFFERS     Q buffers of the WGMMA kernel at head_dim 64
//                               (1 or 2)
//   KSEEK_FA_HD128_Q_BUFFERS    the same at head_dim 128 (2 takes it from 3
//                               to 2 K/V stages; head_dim 256 has 1)
//   KSEEK_FA_RING_UNSIGNED      1 (default): the K/V ring's stage and
//                               phase computed unsigned; 0: signed
//   KSEEK_FA_UNMASKED_NO_INF_TEST head dims (WgmmaDimBit) whose unmasked key
//                               tiles skip the softmax's test for a row
//                               without keys (default 1: head_dim 64)
//   KSEEK_FA_EARLY_NEXT         1 (default): the WGMMA producer asks the
//                               queue for its next item before waiting for
//                               its item's last V stage; 0: after
//   KSEEK_FA_WGMMA_L2_SECTION_MB MB of K/V per L2 section of the WGMMA
//                               kernel's items (default 16)
//   KSEEK_FA_TRACE              1: a diagnostic build (never a candidate)
//                               whose WGMMA kernels stamp each item's
//                               phases (SM clock, global timer) into a
//                               device array that the exported
//                               kseek_fa_trace_read copies out
//                               (bench/item_trace.py); default 0: none
//   KSEEK_FA_FULL_L2_SECTION_DIMS, KSEEK_FA_FULL_L2_SECTION_MB the WGMMA
//                               kernels (WgmmaDimBit bits; default 2) whose
//                               items without causal masking take sections
//                               of that many MB instead (default 8)
//   KSEEK_FA_SPLIT_MASK_MIN_TILES, KSEEK_FA_HD64_SPLIT_MASK_MIN_TILES,
//   KSEEK_FA_HD192_SPLIT_MASK_MIN_TILES the fewest key tiles per item that
//                               take the split loop at head_dim 256, 64
//                               (causal) and on the D = 192 kernel
//                               (defaults 32, 8, 0)
//   KSEEK_FA_PDL_LATE           WGMMA kernels (bits as KSEEK_FA_PDL) whose
//                               dependent launch waits until the producer
//                               finds the queue empty (default 10)
//   KSEEK_FA_PDL_END            WGMMA kernels whose combine (after split
//                               keys) launches as the attention grid ends:
//                               a dependent never let launch early
//                               (default 4, head_dim 256)
//   KSEEK_FA_MMA_PDL_END        the same for the mma.sync and decode kernels
//                               (bits 1, 2, 4 by D; default 7)
//   KSEEK_FA_COMBINE_IN_FLIGHT  splits' loads in flight per warp where the
//                               combine keeps more than one (4, 8, 16;
//                               default 4)
//   KSEEK_FA_DECODE_ROW_COMBINE_MIN_SPLITS the fewest splits at which the
//                               combine behind the decode kernel takes a
//                               block per row (default 5)
//   KSEEK_FA_DECODE_NARROW      head dims (2 D = 128, 4 D = 256) whose decode
//                               kernel computes over 3/4 of D where head_dim
//                               is at most that (default 6)
//   KSEEK_FA_SHORT_KEYS         1: at head_dim 64 and 128, shapes with
//                               seqlen_k <= 64 (<= 80) take 64-key (80-key)
//                               tiles, one per item (2 Q buffers and 3 K/V
//                               stages at head_dim 128), and at 193-256
//                               seqlen_k <= 64 one 64-key tile; 0: 128-key
//                               tiles (80 at 256)
//   KSEEK_FA_Q_PER_CONSUMER     head dims where each consumer's 64 rows of Q
//                               have their own full/empty barriers, so the
//                               next item's rows of the consumer ahead in
//                               the ping-pong load before the other is
//                               done: a sum of 1 (head_dim 64), 2 (128) and
//                               4 (256); default 2 (head_dim 128; measured
//                               +1-4% there at s512-s2048, slower at 256
//                               and 64), elsewhere one pair per Q buffer
//   KSEEK_FA_WIDE_STORES        head dims where the WGMMA kernel stores O
//                               in 16-byte pieces after a transpose within
//                               each quad of lanes (a sum of 1, 2, 4 as
//                               above; default 6: head_dims 128 and 256,
//                               +3-15% at s512-s2048 there, slower at 64);
//                               elsewhere 4-byte stores straight from the
//                               accumulators (on the D = 256 and D = 192
//                               kernels, items of 32 or more key tiles store
//                               by TMA instead: KSEEK_FA_TMA_IN_V)
//   KSEEK_FA_HD128_CAUSAL_Q2_UPTO n > 0: at head_dim 128 with causal
//                               masking and seqlen_k <= n, 2 Q buffers and 2
//                               K/V stages; default 512 (with the TMA
//                               stores +7% at s512, NOTES.md v3k; at
//                               s1024 2 K/V stages with one Q buffer are
//                               2% faster); 0: off
//   KSEEK_FA_HD128_FULL_BLOCK_N keys per tile of the WGMMA kernel at
//                               head_dim 128 without causal masking where
//                               WideKeyTiles (176 or 192 with 2 K/V stages
//                               and 1 Q buffer; 128 as with causal masking,
//                               but for long causal items: below)
//   KSEEK_FA_HD128_CAUSAL_WIDE_KEYS n > 0: those wide tiles with causal
//                               masking too where the mean item sees at
//                               least n keys; default 3072 (v4h; v4g's
//                               4096, v4d's 6144); 0: off
//   KSEEK_FA_RESCALE_UNDER_S    where the WGMMA consumers rescale O by a
//                               tile's new maxima just before the next P V
//                               is issued, under the next tile's S, instead
//                               of after the tile's own P V: 1 (default)
//                               with the wide key tiles (head_dim 128
//                               without causal masking: +0.4-0.8% there),
//                               2 every WGMMA kernel (-6% at head_dim 64
//                               causal s512), 3 with the wide key tiles
//                               and at head_dim 192 and 256 (as FA3
//                               rescales above head_dim 128; measured
//                               0.996-1.000x), 0 none
//   KSEEK_FA_NARROW_SCORES      1 (default): with head_dim at most 3/4 of
//                               the kernel's D (80/96 on 128, 160/192 on
//                               256) the WGMMA kernel computes S over the
//                               first 3/4 of the columns only; 0: over all
//   KSEEK_FA_WGMMA_MAX_HEAD_DIM head dims above it always take the mma.sync
//                               kernel
//   KSEEK_FA_MMA_PACK_GQA       1: the mma.sync kernel packs the query heads
//                               that share a K/V head into its row tiles and
//                               splits keys up to 32 ways; 0: one query head
//                               per block, up to 16 splits
//   KSEEK_FA_GQA_DECODE_MAX_Q   with packing, GQA shapes of at most this many
//                               queries always take the mma.sync kernel
//   KSEEK_FA_DECODE_KERNEL      1: shapes bound for the mma.sync kernel whose
//                               row groups have at most
//                               KSEEK_FA_DECODE_MAX_ROWS rows take the decode
//                               kernel (keys split between its 4 warps, up
//                               to 128 key splits; at head_dim <= 128 not
//                               GQA shapes that split keys, see LaunchMma);
//                               2 (default): also shapes of at most 16
//                               queries without GQA that would take the
//                               WGMMA kernel (at head_dim 256 only with at
//                               least 64 keys); 0: off
//   KSEEK_FA_DECODE_MAX_ROWS    rows per row group (queries x pack) up to
//                               which the decode kernel runs (16 rows per
//                               block: more rows, more blocks reading the
//                               same K/V)
#ifndef KSEEK_FA_FAST_EXP2
#define KSEEK_FA_FAST_EXP2 1
#endif
#ifndef KSEEK_FA_TRACE
#define KSEEK_FA_TRACE 0
#endif
#ifndef KSEEK_FA_HD256_BLOCK_N
#define KSEEK_FA_HD256_BLOCK_N 80
#endif
#ifndef KSEEK_FA_PV_N256
#define KSEEK_FA_PV_N256 1
#endif
#ifndef KSEEK_FA_HD64_CONSUMERS
#define KSEEK_FA_HD64_CONSUMERS 0
#endif
// Default 25: on 2,048 items of 256 queries (batch 64, 16 heads; two
// 192-row items per head, 384 rows for 256) two consumers took 0.81-0.83x
// the time of three at 256-2048 keys, while at 5% the shapes padded by
// 12.5% (the grid's s512 and s1024, ragged_s1000, prefill_q1000,
// qlong_q1024) lost 5-7% (NOTES.md v3r, hd64_consumers.sh). Only 193-256
// queries pad by more than 20%; no task or extra scenario with items for
// two waves has them, so the task's shapes keep their consumers.
#ifndef KSEEK_FA_HD64_THREE_PAD_PCT
#define KSEEK_FA_HD64_THREE_PAD_PCT 25
#endif
#ifndef KSEEK_FA_HD64_Q_BUFFERS
#define KSEEK_FA_HD64_Q_BUFFERS 2
#endif
// 1 (default since v3t): the WGMMA kernel's K/V ring positions divided
// unsigned (RingStage, RingPhase); 0: signed, as up to v3s. Measured after
// v3s (loop_trims.sh): 1.000x over 208 scenarios, head_dim 64 +0.3%.
#ifndef KSEEK_FA_RING_UNSIGNED
#define KSEEK_FA_RING_UNSIGNED 1
#endif
// WGMMA kernels (sums of WgmmaDimBit) whose consumers' key tiles that
// need no mask compute the rows' new bases without the test for a row
// that has seen no key (their keys are valid for every row of the
// consumer, so every new maximum is finite); elsewhere the test is in
// every tile. Measured after v3s (loop_trims.sh, at every head dim):
// +1.3% on the head_dim 64 grid, -1.4 to -1.7% at 128 and -2.5% at 80/96;
// default since v3t 1 (head_dim 64 only).
#ifndef KSEEK_FA_UNMASKED_NO_INF_TEST
#define KSEEK_FA_UNMASKED_NO_INF_TEST 1
#endif
#ifndef KSEEK_FA_HD128_Q_BUFFERS
#define KSEEK_FA_HD128_Q_BUFFERS 1
#endif
#ifndef KSEEK_FA_SHORT_KEYS
#define KSEEK_FA_SHORT_KEYS 1
#endif
#ifndef KSEEK_FA_Q_PER_CONSUMER
#define KSEEK_FA_Q_PER_CONSUMER 2
#endif
#ifndef KSEEK_FA_WIDE_STORES
#define KSEEK_FA_WIDE_STORES 6
#endif
#ifndef KSEEK_FA_HD128_CAUSAL_Q2_UPTO
#define KSEEK_FA_HD128_CAUSAL_Q2_UPTO 512
#endif
#ifndef KSEEK_FA_HD128_FULL_BLOCK_N
#define KSEEK_FA_HD128_FULL_BLOCK_N 176
#endif
#ifndef KSEEK_FA_NARROW_SCORES
#define KSEEK_FA_NARROW_SCORES 1
#endif
#ifndef KSEEK_FA_RESCALE_UNDER_S
#define KSEEK_FA_RESCALE_UNDER_S 1
#endif
#ifndef KSEEK_FA_WGMMA_SPLIT_KEYS
#define KSEEK_FA_WGMMA_SPLIT_KEYS 1
#endif
#ifndef KSEEK_FA_WGMMA_MAX_HEAD_DIM
#define KSEEK_FA_WGMMA_MAX_HEAD_DIM 256
#endif
#ifndef KSEEK_FA_MMA_PACK_GQA
#define KSEEK_FA_MMA_PACK_GQA 1
#endif
#ifndef KSEEK_FA_GQA_DECODE_MAX_Q
#define KSEEK_FA_GQA_DECODE_MAX_Q 16
#endif
#ifndef KSEEK_FA_DECODE_KERNEL
#define KSEEK_FA_DECODE_KERNEL 2
#endif

#ifndef KSEEK_FA_DECODE_MAX_ROWS
#define KSEEK_FA_DECODE_MAX_ROWS 32
#endif
// The WGMMA kernel's barrier waits, loop body and descriptors (NOTES.md
// v3h; each measured on the H200 against the code it replaced).
// mbarrier waits: each try with a suspend-time hint in ns (0: none), so
// that a waiting thread sleeps until the phase completes, where without
// it the producer spun (a tenth of the kernel's instructions).
#ifndef KSEEK_FA_WAIT_HINT_NS
#define KSEEK_FA_WAIT_HINT_NS 1000000
#endif
// The consumers test a tile's K and V barriers together before waiting on
// either (1), or wait on one after the other (0); where KSEEK_FA_V_AFTER_S
// is off.
#ifndef KSEEK_FA_TEST_KV_TOGETHER
#define KSEEK_FA_TEST_KV_TOGETHER 1
#endif
// WGMMA kernels (sums of WgmmaDimBit) whose consumers wait for a step's V
// only after issuing its S, between the two GEMMs (as FA3 does), so that S
// starts as soon as K has landed when V is late; elsewhere K and V are in
// before the turn is taken. Default 3 (head_dim 64 and 128): measured
// against 0 over 150 grid, GQA, ragged and heads1 scenarios +0.9% on the
// head_dim 128 grid (s512-s1024 +1.1-1.5%, s8192-s16384 +0.9-1.9%, causal
// +0.2-1.7%), +0.4% at 64, +2% at 80 and 96, 0.998-1.0 at 160-256
// (NOTES.md v3s).
#ifndef KSEEK_FA_V_AFTER_S
#define KSEEK_FA_V_AFTER_S 3
#endif
// wgmma descriptors as a base descriptor plus each operand's offset (1),
// or each built from its address (0).
#ifndef KSEEK_FA_DESC_OFFSETS
#define KSEEK_FA_DESC_OFFSETS 1
#endif
// The consumers' tiles that need no mask in a loop of their own (a sum of
// head-dim bits: 1 head_dim 64, 2 128, 4 256), and their arrivals as
// predicated instructions (1) rather than in a branch on the lane (0):
// together (neither alone) they keep ptxas's wait for P V after the
// softmax, where a branch between the two waits moved it before.
#ifndef KSEEK_FA_SPLIT_MASK_LOOP
#define KSEEK_FA_SPLIT_MASK_LOOP 7
#endif
// At head_dim 64 (causal) and 256 the split loop only for items of at
// least this many key tiles (their kernels come with and without it);
// head_dim 64 and the D = 192 kernel (head_dim 136-192) have their own
// counts since v3u: 8 and 0 (split_min_dims.sh, NOTES.md v3u: head_dim 64
// causal s1024-s2048 +2-4%, the D = 192 kernel +1.8%; 256 loses below 32).
#ifndef KSEEK_FA_SPLIT_MASK_MIN_TILES
#define KSEEK_FA_SPLIT_MASK_MIN_TILES 32
#endif
#ifndef KSEEK_FA_HD64_SPLIT_MASK_MIN_TILES
#define KSEEK_FA_HD64_SPLIT_MASK_MIN_TILES 8
#endif
#ifndef KSEEK_FA_HD192_SPLIT_MASK_MIN_TILES
#define KSEEK_FA_HD192_SPLIT_MASK_MIN_TILES 0
#endif
#ifndef KSEEK_FA_PREDICATED_ARRIVE
#define KSEEK_FA_PREDICATED_ARRIVE 1
#endif
// Without the split loop (the kernels for short items, SplitMaskMinTiles),
// every tile's scores masked, a tile that needs no mask too (its keys are
// all below the rows' limits: the mask changes nothing), rather than
// behind a test of the tile (a sum of WgmmaDimBit bits; default 0): with
// the test's branch between the waits ptxas put the P V wait before the
// softmax (bench/cubin_events.py shows where it is without a GPU). With 5
// the wait moves after it, but the mask's instructions cost more: -3-4% at
// head_dim 256 s512-s1024, -6% at 64 causal s512 (an H100,
// bench/results/always_mask_h100.txt).
#ifndef KSEEK_FA_ALWAYS_MASK
#define KSEEK_FA_ALWAYS_MASK 0
#endif
// The wait for the previous tile's P V kept after the softmax by a store
// that depends on the tile's row sums and never runs (StoreIfNegative):
// ptxas moves a wgmma wait above arithmetic but not above a store (a sum
// of WgmmaDimBit bits; default 0). It puts the wait after every
// exponential, where ptxas's own schedule waits amid them: with 2, -1-3.5%
// at head_dim 128 s512-s4096, -7.5% at full s16384 (an H100, as above).
#ifndef KSEEK_FA_PIN_PV_WAIT
#define KSEEK_FA_PIN_PV_WAIT 0
#endif
// An item's start and end (NOTES.md v3i; sums of head-dim bits as
// above). O through shared memory where it fits (not at head_dim 256, nor
// at 128 with causal masking's 3 K/V stages): stmatrix into a warp's 2 KB,
// then 16-byte loads and stores of 128-byte row pieces; elsewhere as
// KSEEK_FA_WIDE_STORES says. Default 1 (head_dim 64: +2-6% with the next
// switch; at 128 it measured -2% on long shapes).
#ifndef KSEEK_FA_STAGED_STORES
#define KSEEK_FA_STAGED_STORES 1
#endif
// The producer writes each item's block (batch, head, rows, key tiles,
// split) beside its index, so that the consumers do not divide to find
// it. Default 1 (head_dim 64; at 128 causal -5% and at 256 -3% on long
// shapes, where ptxas then kept the barrier addresses out of uniform
// registers).
#ifndef KSEEK_FA_PUBLISH_WORK
#define KSEEK_FA_PUBLISH_WORK 1
#endif
// Key splits of the WGMMA kernel by estimated time (WgmmaSplits; 1), or
// by wave efficiency alone (ChooseSplits; 0), and the estimate's terms:
// an item's own cost in key tiles, and the combine's weight (4: as
// estimated from bandwidth and FLOP rate).
#ifndef KSEEK_FA_SPLIT_COST
#define KSEEK_FA_SPLIT_COST 1
#endif
#ifndef KSEEK_FA_SPLIT_ITEM_TILES
#define KSEEK_FA_SPLIT_ITEM_TILES 2
#endif
#ifndef KSEEK_FA_SPLIT_COMBINE_WEIGHT
#define KSEEK_FA_SPLIT_COMBINE_WEIGHT 4
#endif
// The WGMMA kernel's sections under causal masking (WgmmaSectionPairs):
// the size whose simulated queue ends first (1), or the largest that fits
// L2 (0); one section is a candidate where all K/V takes at most
// KSEEK_FA_L2_WHOLE_MB.
#ifndef KSEEK_FA_SECTION_SEARCH
#define KSEEK_FA_SECTION_SEARCH 1
#endif
#ifndef KSEEK_FA_L2_WHOLE_MB
#define KSEEK_FA_L2_WHOLE_MB 40
#endif
// 1 (the default since v3u): the WGMMA kernel's producer takes its next item
// from the queue before the wait for its item's last V stage; 0: after it.
// Measured after v3t (early_next.sh): 1.002x over 208 scenarios, grid
// head_dim 128 causal s512 +1.8%, long head_dim 64 +3.3%; all correct.
#ifndef KSEEK_FA_EARLY_NEXT
#define KSEEK_FA_EARLY_NEXT 1
#endif
// The WGMMA kernel's L2 sections: the (batch, head) pairs whose K/V fit in
// this many MB (default 16, as the mma.sync kernel's kL2SectionBytes).
// Measured after v3t (l2_sections.sh, 208 scenarios): 32 0.992x, 24
// 0.998x, 8 0.997x (head_dim 256 causal 0.958x).
#ifndef KSEEK_FA_WGMMA_L2_SECTION_MB
#define KSEEK_FA_WGMMA_L2_SECTION_MB 16
#endif
// Without causal masking, at the WGMMA kernels of KSEEK_FA_FULL_L2_SECTION_DIMS
// (WgmmaDimBit bits; default 2: the D = 128 kernel), sections of
// KSEEK_FA_FULL_L2_SECTION_MB instead (default 8). 8 MB everywhere,
// measured after v3t and again at D = 128 after v3x: head_dim 128
// non-causal +0.4% (36 shapes; grid s512 and s1024 +0.6-1.2%, nothing
// under 0.995), under causal masking -0.3% (ragged causal s3001 -5%:
// fewer pairs per section for the search) and at head_dim 256 causal -3
// to -9% (2 pairs a section).
#ifndef KSEEK_FA_FULL_L2_SECTION_DIMS
#define KSEEK_FA_FULL_L2_SECTION_DIMS 2
#endif
#ifndef KSEEK_FA_FULL_L2_SECTION_MB
#define KSEEK_FA_FULL_L2_SECTION_MB 8
#endif
// Ping-pong turns of the WGMMA consumers (sums of head-dim bits: 1
// head_dim 64, 2 128, 4 256 and 192): with the bit, a consumer issues a
// tile's GEMMs only in its turn (default 7: every head dim); without, as
// soon as its operands are in (FA3 has no such barrier above head_dim
// 128). KSEEK_FA_FIRST_S_TURN: with the bit, an item's first S also waits
// for the turn (default 7, as before); without, it is issued at once and
// takes no turn (as FA3's first S). Both measured within 0.5% of the
// defaults (NOTES.md v3j).
#ifndef KSEEK_FA_PINGPONG
#define KSEEK_FA_PINGPONG 7
#endif
#ifndef KSEEK_FA_FIRST_S_TURN
#define KSEEK_FA_FIRST_S_TURN 7
#endif
// 1: at head_dim 256 with narrow scores, P V over (and O of) the first 192
// columns only (one m64n192k16 per 16 keys); 0: over all 256.
#ifndef KSEEK_FA_NARROW_PV
#define KSEEK_FA_NARROW_PV 1
#endif
// 1: head_dim 136 to 192 on a WGMMA kernel of D = 192 (three 64-column
// blocks: no block of zeros loaded into shared memory, and room for a
// second Q buffer), with KSEEK_FA_HD192_BLOCK_N keys per tile (64, 80, 96
// or 112; 80 where seqlen_k is at most 80) and KSEEK_FA_HD192_Q_BUFFERS Q
// buffers (0: two with at most 80 keys per tile, else one); 0: on D = 256
// with narrow scores and P V. Default 1 with 112 keys (as FA3's hd192
// tile): +13.5% over the 23 head_dim 136-192 scenarios, and the D = 256
// kernel's times on them moved by up to 1.33x with the inputs' placement
// in memory, this one's by at most 1.012x (NOTES.md v3j).
#ifndef KSEEK_FA_D192
#define KSEEK_FA_D192 1
#endif
#ifndef KSEEK_FA_HD192_BLOCK_N
#define KSEEK_FA_HD192_BLOCK_N 112
#endif
#ifndef KSEEK_FA_HD192_Q_BUFFERS
#define KSEEK_FA_HD192_Q_BUFFERS 0
#endif
// TMA's L2 promotion of the WGMMA kernel's q, k and v loads: 0 none, 1 64
// bytes, 2 128 bytes, 3 256 bytes (default; 0 and 2 measured the same).
// Head dims (a sum of bits: 1 head_dim 64, 2 128, 4 256, 8 the D = 192
// kernel, apart from 256 here) whose WGMMA kernel's producer and consumers
// locate an item (LocateFast)
// with its divisions (the item by splits, by items per section, by the
// section's pairs, by heads; the producer's K/V head too) as
// multiplications by precomputed reciprocals, not integer divisions
// (about 25 instructions each). Default 7 (head_dim 64 and 128: with the
// fast epilogue and TMA stores +1.5-4% there, NOTES.md v3k; 256: v3n's
// third call +1.1% over head_dim 160-256, many-short +8%, where v3l's
// had measured s4096-16384 3-6% slower). (At 192 with 112-key tiles
// ptxas spills 12 bytes in the split-loop instance, 4 without.)
#ifndef KSEEK_FA_FAST_LOCATE
#define KSEEK_FA_FAST_LOCATE 7
#endif
// O stored by TMA from shared memory (StoreOutputTma; sums of head-dim
// bits, at head_dim 64 and 128 where 2 KB per consumer warp fits): the
// consumers' epilogue is stmatrix and one store per warp and 64 columns,
// not shuffles, address arithmetic and bounds tests per lane. Default 3
// (head_dim 64 and 128).
#ifndef KSEEK_FA_TMA_STORES
#define KSEEK_FA_TMA_STORES 3
#endif
// Head dims (bits as KSEEK_FA_TMA_STORES) whose instances with 128-key and
// wider tiles take the TMA stores too; elsewhere only the short-tile
// instances (64 or 80 keys) do. Default 2: at head_dim 64 the 128-key
// two-consumer instances store O without TMA (v3l's call 3: +1.3% over
// head_dim 64, +2.6% long, +3% prefill; the short tiles keep them: 3-7%
// faster on many-short head_dim 64 in v3l's call 2).
#ifndef KSEEK_FA_TMA_LONG_TILES
#define KSEEK_FA_TMA_LONG_TILES 2
#endif
// WGMMA kernels (sums of WgmmaDimBit: 4 the D = 256 kernel, 8 the D = 192
// one; 2 head_dim 128's instances that have no TMA buffers, i.e. the
// two-Q-buffer kernel on 160-key tiles, the default
// KSEEK_FA_HD128_Q2_BLOCK_N since v3r: v3n's call 5, 0.995x the then
// default's 144/128-key tiles, off) whose O goes
// out by TMA stores staged in the V tile of the item's
// last key tile, where no 2 KB buffers per warp fit beside the K/V
// stages: both consumers' last P V done (a named barrier), each warp's
// stores read their two 2 KB buffers there, then the warp releases that V
// stage to the producer, which loads the next item's second V tile into
// it. Without split keys (partials keep their stores), the other stores
// (KSEEK_FA_WIDE_STORES) are a quad's shuffles, 16 per thread at 256
// columns, whose registers wait on the LSU's queue. Default 12 (both;
// v3n's third call, from 32 tiles with KSEEK_FA_FAST_LOCATE at 256: grid
// head_dim 256 s4096 +1.6-1.8%, ragged_s3001 +2.7%, 1.014x over head_dim
// 160-256 with it, 1.011x without; the split-loop instance's spills 20
// bytes -> 4).
#ifndef KSEEK_FA_TMA_IN_V
#define KSEEK_FA_TMA_IN_V 12
#endif
// The fewest key tiles of an item whose O goes out that way (fewer: the
// other stores): v3n's second call measured it 7.5% slower on many-short
// head_dim 256 and 0.5-1% at s512-s2048 for every item, +1-2% from 3,000
// keys (38 tiles of 80). Default 32 (80-key tiles: 2,560 keys and more).
#ifndef KSEEK_FA_TMA_IN_V_MIN_TILES
#define KSEEK_FA_TMA_IN_V_MIN_TILES 32
#endif
// The same at head_dim 128 (its items of 2,048 and 4,096 keys have 13 and
// 26 tiles of 160 keys). Default 0.
#ifndef KSEEK_FA_TMA_IN_V_MIN_TILES_128
#define KSEEK_FA_TMA_IN_V_MIN_TILES_128 0
#endif
// The WGMMA kernels (bits as KSEEK_FA_FAST_LOCATE) whose cluster
// instances (KSEEK_FA_CLUSTER) load K/V with the L2 hint evict-last (each
// K/V tile is read by every query tile of its head; FA3 loads them so).
// Default 2 (head_dim 128: +0.4-1.1% at s512-s1024 in three calls,
// -0.2-0.5% at s2048-s4096 with GQA; 14 and the hint only up to 2048 keys
// measured 0.996x, NOTES.md "v3q"). The kernels without clusters load
// without hints (K/V evict-last in every instance measured 0.997x the
// default, and with Q evict-first 0.992x, over 195 scenarios, NOTES.md
// "After v3n").
#ifndef KSEEK_FA_TMA_CACHE_HINT_CLUSTER
#define KSEEK_FA_TMA_CACHE_HINT_CLUSTER 2
#endif
// WGMMA kernels (bits as KSEEK_FA_FAST_LOCATE: 2 head_dim 128, 4 the
// D = 256 kernel, 8 the D = 192 one) that run in clusters of two blocks
// without causal masking, with whole items and an even number of query
// tiles per head (Launch: not the narrow head_dim 80/96 instances nor the
// short-key tiles): the two
// blocks of a cluster take two query tiles of one head, and each loads
// half of every K and V tile (alternate 64-column blocks) into both
// blocks' stages by TMA multicast, so each tile is read from L2 once per
// pair of query tiles. A stage is free when both blocks' consumers have
// released it. The pairs go to the clusters in a static order (every
// item costs the same). Not where seqlen_q > seqlen_k (qlong_q1024_k512:
// 0.96-0.99x). Default 14 (all three; NOTES.md v3o: 1.016x the default
// over head_dim 128's non-causal grid, 1.017x over 256's, +2-4% at
// s512-s4096; run back to back 1236-1251 J/PFLOP at hd128 s1024 where
// the default took 1328 and FA3 1252; v3p: the D = 192 kernel 1.007x
// over the non-causal head_dim 160/192 scenarios, ragged_s3001_hd192
// +1.2-1.6%).
#ifndef KSEEK_FA_CLUSTER
#define KSEEK_FA_CLUSTER 14
#endif
// The WGMMA kernels (bits as KSEEK_FA_FAST_LOCATE) whose clusters
// (KSEEK_FA_CLUSTER, which must have the bit too) take whole items with
// causal masking as well, on the same shapes (no more queries than keys,
// an even number of query tiles per head). A pair's two query tiles see
// up to one key tile apart: the block with the earlier rows walks the
// pair's range, its tiles past its rows' limits masked to -inf (as a
// consumer's past its own 64 rows already are). Causal items do not cost
// the same, and the clusters take pairs in a static order: under causal
// masking every other round of that order runs backwards (the queue holds
// the heaviest pairs first), so that each cluster's work sums to about the
// same. At head_dim 128 the pairs take the item's usual key tiles (two Q
// buffers up to KSEEK_FA_HD128_CAUSAL_Q2_UPTO keys, 176-key tiles from
// KSEEK_FA_HD128_CAUSAL_WIDE_KEYS, else 128-key tiles on an instance of
// their own). Not the narrow head_dim 80 and 96 instances. In the static
// order (KSEEK_FA_CAUSAL_CLUSTER_QUEUE=0) timed once on an H100: the
// grid's causal rows s2048-s16384 0.62-0.64x, the static order's
// imbalance over the L2 sections (NOTES.md "The tail's shares and the
// causal clusters timed once"). From the queue (below), on an H100 beside
// v4e: head_dim 128 grid causal s16384 +2.9-3.2%, prefill q2048 k16384
// and q1000 k8192 +3.5-3.7%, long_single +2.8% (the 176-key tiles), s8192
// +0.1-0.7% (128-key), s4096 -1%, s2048 -3%, s1024 -6%; at D = 256 and
// 192 -1.7-7% up to s4096, 0-1.5% from s8192 (NOTES.md v4f). Default 2
// (head_dim 128) where the mean item sees KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS.
#ifndef KSEEK_FA_CAUSAL_CLUSTER
#define KSEEK_FA_CAUSAL_CLUSTER 2
#endif
// Causal pairs in clusters (KSEEK_FA_CAUSAL_CLUSTER) only where the mean
// item sees at least this many keys (seqlen_k - seqlen_q / 2): below,
// the pair's extra masked tile and the shorter items lost (above). At
// the value of KSEEK_FA_HD128_CAUSAL_WIDE_KEYS, head_dim 128's causal
// pairs run on the 176-key tiles only, and the 128-key causal cluster
// instance is not compiled. 0: every causal shape the clusters can take.
// Default 3072 (v4h), together with KSEEK_FA_HD128_CAUSAL_WIDE_KEYS=3072:
// prefill q333 k4097 causal (3931 mean keys) +3.1% on an H100 beside v4g,
// grid causal s4096 (2048) unchanged (NOTES.md "After v4g"). v4g had 4096
// for both (grid causal s8192 +1.7-2.1% beside v4f, NOTES.md v4f, call
// 5), v4f 6144.
#ifndef KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS
#define KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS 3072
#endif
// With KSEEK_FA_CAUSAL_CLUSTER: 1, the causal pairs from a queue instead
// of the static order (the static order's backward rounds balance a cost
// that falls over the whole queue, but the L2 sections make it a
// sawtooth). A cluster's rank 0 producer takes the next pair from the
// stream's counter (as the single blocks do) and hands it to rank 1's
// producer through a ring of slots in rank 1's shared memory (a remote
// store and a release arrival on rank 1's barrier for the slot; rank 1
// arrives on rank 0's barrier once it has read the slot, so that rank 0
// writes no slot twice unread). 0: the static order.
#ifndef KSEEK_FA_CAUSAL_CLUSTER_QUEUE
#define KSEEK_FA_CAUSAL_CLUSTER_QUEUE 1
#endif
// The WGMMA kernels (bits as KSEEK_FA_FAST_LOCATE) whose cluster instances
// share the key tiles of the static order's last rounds evenly, without
// causal masking (the wave's tail: 1024 pairs on 66 clusters take 16
// rounds for 15.5 rounds' work; 512 take 8 for 7.76). The clusters take
// whole pairs for all rounds but the last one or two, then the remaining
// pairs' key tiles (between one and two pairs' worth per cluster) in
// shares of the same number of tiles, cluster c the c-th: a share walks
// its tiles pair by pair, one item (segment) per pair it touches. A
// segment with a pair's every tile is a whole item. A pair split between
// shares is taken first by the later shares (their first segments),
// whose warps store their rows' normalised O and LSE (fp32, scratch) and
// count themselves on a counter of their (pair, rank, warp); the segment
// with the pair's first tiles comes last in its share and, finding every
// other segment counted, merges their rows into its registers and stores
// O as a whole item does (KSEEK_FA_TAIL_MERGE); otherwise it stores and
// counts too, and the last to count combines every segment's rows into O
// and the LSE. Either sets the counter back to 0 for the stream's next
// call (no combine kernel). Only where a pair has at least
// KSEEK_FA_TAIL_MIN_TILES key tiles, after KSEEK_FA_TAIL_MIN_WHOLE whole
// rounds, and where the shares save 1% of the rounds' time and
// KSEEK_FA_TAIL_MIN_SAVED_KEYS keys; those launches run an instance of
// their own (kTailShares), the rest the one without. 6 (head_dim 128 and
// 256) is v4e's default: on an H100 +1.2-1.9% on the grid's head_dim
// 128 non-causal rows from s4096 and +1.6-2.4% at 256 s16384, the rest
// unchanged; D = 192's kernel (8) lost 3.5-5% with the shares (NOTES.md
// "v4e"). The shares' instances make the file's compile about 2 minutes
// on the H100's host (0: about 1).
#ifndef KSEEK_FA_TAIL_SPLIT
#define KSEEK_FA_TAIL_SPLIT 6
#endif
#ifndef KSEEK_FA_TAIL_MIN_TILES
#define KSEEK_FA_TAIL_MIN_TILES 8
#endif
// The tail's shares (KSEEK_FA_TAIL_SPLIT) only where they save at least
// this many keys of a cluster's time (key tiles times the tile's keys): a
// share holds a segment or two more than the whole pairs it replaces,
// each with an item's fixed cost (Q, the first S, O's stores: 5-7 us at
// D = 256 by the item trace, 300-400 keys' time at head_dim 128 and 256).
// On an H100 the rows that saved 1920 keys or more gained 0.7-2.4%, those
// that saved 960 lost (NOTES.md "v4e").
#ifndef KSEEK_FA_TAIL_MIN_SAVED_KEYS
#define KSEEK_FA_TAIL_MIN_SAVED_KEYS 1536
#endif
// The fewest whole rounds before the tail's shares (KSEEK_FA_TAIL_SPLIT):
// with fewer than two rounds' pairs every pair is split, and the long
// single-head rows (128 pairs) lost 0.4-1.3% on an H100.
#ifndef KSEEK_FA_TAIL_MIN_WHOLE
#define KSEEK_FA_TAIL_MIN_WHOLE 1
#endif
// 1 (default): the segment that holds a tail pair's first key tiles (its
// share's last, so taken when the pair's other segments are long done)
// merges their stored rows into its own registers where all have counted
// themselves (at most two) and stores O as a whole item's; 0: it stores
// its rows and counts itself as the others do (the last combines).
#ifndef KSEEK_FA_TAIL_MERGE
#define KSEEK_FA_TAIL_MERGE 1
#endif
// The WGMMA kernels (bits as KSEEK_FA_TAIL_SPLIT, WgmmaDimBit) whose
// launches with the tail's shares (KSEEK_FA_TAIL_SPLIT) run as two
// grids: the instance without the shares walks the whole pairs (items
// before Problem::tail_first) and lets the next grid launch as its blocks
// start; the shares' instance, launched after it as a programmatic
// dependent, walks only the shares' segments, its clusters starting on
// the SMs the first grid's clusters leave. Meant to run the whole pairs
// in the plain instance (v4g's trace had the shares' instance 2-4% slower
// per key tile there, NOTES.md v4g), for a grid's start at the seam.
// The shares' grid waits for the first one to complete before it ends
// (griddepcontrol.wait), so that the call's end is both grids'. (The item
// trace, KSEEK_FA_TRACE, then holds the second grid's rounds over the
// first's.) 0 (default): one grid, the shares' instance throughout.
// Measured on an H100 (NOTES.md "After v4g", every head dim's bit): 1.5-2.5%
// slower at head_dim 128 s8192 and s16384 against one grid, although the
// grids overlap by 25-42 us: the first grid's whole rounds took as long
// per round as one grid's; with D = 192's shares (KSEEK_FA_TAIL_SPLIT bit
// 8) +1.1% at dims_hd192 s16384 against the default (no shares there),
// one row; measured again with D = 192's bit alone (8; NOTES.md "After
// v4h"): +0.3% there, +0.1% at hd160 s16384, -0.6% at gqa4 hd160: no
// gain, while one grid with those shares lost 3.4%.
#ifndef KSEEK_FA_TAIL_LAUNCHES
#define KSEEK_FA_TAIL_LAUNCHES 0
#endif
// The WGMMA kernels (bits as KSEEK_FA_FAST_LOCATE) whose cluster
// instances (KSEEK_FA_CLUSTER) walk an item's key tiles from its last to
// its first, as FA3 does: the tiles that need a mask (the partial last
// tile; under causal masking the diagonal ones) come first, the partial
// one in the peeled first tile, so that without causal masking the loop
// has no masked step (a masked tile measured 12% more samples than an
// unmasked one, NOTES.md "After v3n"). Default 2 (head_dim 128): v3p's
// first call (fe14: every instance of head_dim 128, 256 and D = 192 from
// the end, beside the default; 0.993x overall) measured the clustered
// non-causal head_dim 128 items +0.3-1.6% from the end
// (grid s8192-16384 +1.1-1.6%, ragged_s3001 +0.8%, prefill_q1000_k8192
// +0.8%), the items without clusters -0.5-2% (ragged_s4097 -2%,
// prefill_q333_k4097 -1.2%) and causal masking -0.3% at 128, -1.4% at 256.
#ifndef KSEEK_FA_KEYS_FROM_END_CLUSTER
#define KSEEK_FA_KEYS_FROM_END_CLUSTER 2
#endif
// Head dims (bits as KSEEK_FA_FAST_LOCATE) whose WGMMA consumers keep a
// row's softmax reference until a tile's max passes it by more than
// 2^KSEEK_FA_LAZY_RESCALE_LOG2 (SoftmaxScores' kLazy), and skip O's
// rescale (D / 2 multiplications per thread and tile) in a warp where no
// row's moved. Default 14 (head_dim 128, 256 and D = 192; v3l's call 4:
// +1.7% at 256 and 192, +0.7-0.9% at 80/96, +0.3% at 128, +2% long; 2.4%
// slower on the head_dim 64 grid, so not there).
#ifndef KSEEK_FA_LAZY_RESCALE
#define KSEEK_FA_LAZY_RESCALE 14
#endif
#ifndef KSEEK_FA_LAZY_RESCALE_LOG2
#define KSEEK_FA_LAZY_RESCALE_LOG2 8
#endif
// Head dims (bits as KSEEK_FA_FAST_LOCATE) whose WGMMA consumers, on the
// key tiles without a mask after an item's first (every row has seen a key
// by then) and only on tiles of 128 keys or more, try the softmax against
// the rows' current references before computing the tile's maxima
// (SumCheckScores): P = 2^(S scale - reference) and each thread's sums of
// the tile. Where every thread of the warp has both sums at most
// 2^KSEEK_FA_LAZY_RESCALE_LOG2 (so no P is larger, inf or NaN) the
// references stand, O keeps its scale, and the tile costs no maximum,
// shuffle or rescale. Where the test fails with finite sums the warp's
// rows move their references to their largest P (RebaseScores); on inf or
// NaN the warp computes its S again by mma.sync (ScoresByMma: a wgmma
// needs the whole warpgroup) and takes SoftmaxScores' path, so Q
// on the item's last tile is released only after the test (and the
// tile's K too without KSEEK_FA_SC_K_GLOBAL).
// Default 3 (head_dim 64 and 128 with the narrow 80/96; 256 and D = 192
// have no tile that wide; v4j): beside v4i on an H100 +3.5% over 38
// head_dim 64 rows (grid s4096-s16384 +5-6%), +2% at 80/96, +0.2% at 128
// (bench/results/sum_check_h100.txt).
#ifndef KSEEK_FA_SUM_CHECK
#define KSEEK_FA_SUM_CHECK 3
#endif
// Head dims (bits as KSEEK_FA_FAST_LOCATE) whose warps, where the sum
// check passed, release the tile's K (and on the item's last tile Q) right
// after the test, before the wait for the previous P V; a warp whose test
// failed still releases them after its slow path. (The release waits on
// the test, so every exponential of the tile comes before that wait.)
// Default 2 (head_dim 128 with its narrow 80/96; v4k): beside
// KSEEK_FA_SC_K_GLOBAL alone +1.5% at head_dim 128 and 96 (grid head_dim
// 128 full s4096-s16384 +3.5-5%, bench/results/sum_check4_h100.txt);
// without it unchanged (sum_check5_h100.txt).
#ifndef KSEEK_FA_SC_EARLY_RELEASE
#define KSEEK_FA_SC_EARLY_RELEASE 2
#endif
// 2: the sum check's S again (ScoresByMma) reads the tile's K from global
// memory (Scratch::k, plain loads) in a rolled loop over its 8-key blocks,
// so the stage's K is released right after S, before the test, at every
// head dim that has the sum check (Q still after the test: it is read
// from its buffer); 0: from the stage, K released after the test. Default
// 2 (v4l): on an H100 1.015x v4k over 22 rows, v4k's losses on one-tile
// items, heads1 and head_dim 80/96 s1024 recovered
// (bench/results/sum_check6_h100.txt); final run 1.070x FA3 over the grid
// (bench/results/hopper_v4l_h100.txt). (1, v4k's form with the blocks
// unrolled, made the key-tile loops 1.7-1.9x longer and cost 3-8% on
// short items, sum_check5_h100.txt; removed in v4l.)
#ifndef KSEEK_FA_SC_K_GLOBAL
#define KSEEK_FA_SC_K_GLOBAL 2
#endif
#if KSEEK_FA_SC_K_GLOBAL != 0 && KSEEK_FA_SC_K_GLOBAL != 2
#error "KSEEK_FA_SC_K_GLOBAL must be 0 or 2 (1, the unrolled form, was removed in v4l)"
#endif
// The WGMMA kernels (bits as KSEEK_FA_FAST_LOCATE; head_dim 64 and 128
// only, with their narrow 80/96) whose consumers hold their 64 rows of Q in
// registers, on key tiles of at most KSEEK_FA_Q_REGS_MAX_N keys: each warp
// loads its 16 rows by ldmatrix once the item's Q has landed (the m16n8k16
// A layout, as P's for P V) and S = Q K^T takes A from registers, so the
// tensor cores read only K from shared memory for S (a third less of
// shared memory read per tile: the boards run at their power limit, where
// energy per FLOP sets the clock, NOTES.md "After v3n"), and the Q buffer
// is released as soon as the warps hold their rows, so the producer loads
// the next item's Q (and then its first K/V tiles) while this item
// computes, also with one Q buffer. 32 registers per consumer thread at
// head_dim 128: on 160-key tiles (KSEEK_FA_Q_REGS_MAX_N=160) ptxas
// serialised the wgmma for want of registers, and with three consumers
// (160 registers at head_dim 64) it spilled, so neither takes it.
// Default 2 (head_dim 128 and its narrow 80/96; v4i), with
// KSEEK_FA_Q_REGS_MIN_N=128. Side by side on an H100 (bench/results/
// q_regs_check_h100.txt): +0.6-1.7% on head_dim 128 full s512-s1024,
// ragged s100-s1000 and qlong_q1024_k512, no head_dim 128 row lower; at
// head_dim 64 (3) long_single_s32768_h1 and prefill_q256_k16384 lost
// 2.7-3.9% (grid causal s512 +1%); on the short-key tiles
// (KSEEK_FA_Q_REGS_MIN_N=0) many_short s32 lost 3-6%. 0: Q read from
// shared memory by every S.
#ifndef KSEEK_FA_Q_REGS
#define KSEEK_FA_Q_REGS 2
#endif
#ifndef KSEEK_FA_Q_REGS_MAX_N
#define KSEEK_FA_Q_REGS_MAX_N 128
#endif
// KSEEK_FA_Q_REGS only on key tiles of at least this many keys. Default
// 128 (v4i): the short-key tiles (80 and 64 keys, for sequences that fit
// one tile), whose items read Q once anyway, read it from shared memory
// (many_short s32 lost 3-6% with Q in registers there); 0: every tile up
// to KSEEK_FA_Q_REGS_MAX_N.
#ifndef KSEEK_FA_Q_REGS_MIN_N
#define KSEEK_FA_Q_REGS_MIN_N 128
#endif
// 1: KSEEK_FA_Q_REGS also in the instances with one Q buffer (head_dim
// 128's 128-key tiles for causal items from 513 keys). There ptxas put
// the wait for P V before the softmax with Q in registers (bench/
// sass_loops.py's mark) and on an H100 causal s2048-s4096 lost 2% (NOTES.md
// "Q in registers"); with the wait pinned after the softmax
// (KSEEK_FA_PIN_PV_WAIT) no better than the default there; 0 (default):
// only the two-Q-buffer instances.
#ifndef KSEEK_FA_Q_REGS_ONE_Q_BUFFER
#define KSEEK_FA_Q_REGS_ONE_Q_BUFFER 0
#endif
// K/V stages of the head_dim 128 WGMMA kernel with 128-key tiles and one Q
// buffer (causal masking, short non-causal sequences): 2 (default) as FA3
// has there, which leaves room for KSEEK_FA_TMA_STORES (+1-2% at causal
// s1024-s2048 over 3 stages without them), or 3.
#ifndef KSEEK_FA_HD128_STAGES
#define KSEEK_FA_HD128_STAGES 2
#endif
// Head dims (a sum of bits as KSEEK_FA_TMA_STORES; 64 and 128 only) where
// row groups of 17-32 rows (GQA decode with 2-4 queries: 32 rows at 4
// queries x 8 heads) take the decode kernel with two m16 row tiles per warp
// over each K/V chunk (one block per group and split, K/V read once);
// elsewhere 16-row blocks, two per such group. Default 1 (head_dim 64:
// +12% on decode_q4_k16000_hd64_gqa8_causal; +1% at 128, NOTES.md v3k).
#ifndef KSEEK_FA_DECODE_TWO_TILES
#define KSEEK_FA_DECODE_TWO_TILES 1
#endif
// Key splits of the mma.sync kernels (ChooseSplits): the fewest splits
// whose wave efficiency is within this percentage of the best; for the
// decode kernel's long splits (GQA decode, one block per SM) its own
// percentage. Default 85 and 85.
#ifndef KSEEK_FA_SPLIT_KEEP_PCT
#define KSEEK_FA_SPLIT_KEEP_PCT 85
#endif
#ifndef KSEEK_FA_LONG_SPLIT_KEEP_PCT
#define KSEEK_FA_LONG_SPLIT_KEEP_PCT 85
#endif
// The epilogue's 1 / (row sum) and log2(row sum) on the MUFU unit
// (rcp.approx, lg2.approx: one instruction each, relative errors near
// 2^-22) instead of IEEE division and log2f (a slow-path branch and a
// 20-instruction polynomial). A sum of head-dim bits as KSEEK_FA_TMA_STORES;
// default 3 (head_dim 64 and 128: +2-15% at few keys per item; at 256 the
// WGMMA kernel measured 1-4% slower with it).
#ifndef KSEEK_FA_FAST_EPILOGUE
#define KSEEK_FA_FAST_EPILOGUE 3
#endif
// n > 0: at head_dim 128 without causal masking (head_dim 128, not the
// narrow 80/96) and seqlen_k <= n, 128-key tiles, 2 Q buffers and 2 K/V
// stages (the instance of KSEEK_FA_HD128_CAUSAL_Q2_UPTO) instead of the
// wide tiles: items of few tiles start while the last one ends. Default
// 4096 (with the TMA stores +6% at s512, +1-4% at s1024-s4096; 0.996x
// at s8192, 0.993x at s16384); 0: off.
// Keys per tile of head_dim 128's two-Q-buffer kernel without causal
// masking (KSEEK_FA_HD128_FULL_Q2_UPTO) where they pad the keys by at most
// 5% more than 128-key tiles do (WideKeyTiles): 128 (every such shape on
// 128-key tiles), 144 (with the TMA stores: 64 + 144 KB + 16 KB) or 160
// (default; 224 KB, no room for them: O in 16-byte stores): between
// 128-key tiles with two Q buffers (0.96x FA3 at s1024-s4096 in v3l's
// final run) and 176-key tiles with one (slower than those up to 4096
// keys: v3k's q2_lengths.sh, v3l's call 7). v3m's call 1a: 144 1.006x 128
// over 29 head_dim 128 scenarios (ragged +2.3%, qlong +1.4%, the grid
// 1.000), 160 0.992x; after the clusters and the evict-last K/V (v3q),
// 160 +0.7-1.4% over 144 on all 8 rows where it is taken (grid s2048 and
// s4096, GQA s2048; NOTES.md "After v3q", call 6), hence v3r.
#ifndef KSEEK_FA_HD128_Q2_BLOCK_N
#define KSEEK_FA_HD128_Q2_BLOCK_N 160
#endif
#ifndef KSEEK_FA_HD128_FULL_Q2_UPTO
#define KSEEK_FA_HD128_FULL_Q2_UPTO 4096
#endif
// n > 0: of those lengths, the ones past n keys take the wide one-Q-buffer
// tiles (KSEEK_FA_HD128_FULL_BLOCK_N) where those pad seqlen_k by at most
// 2% more than the two-Q-buffer tiles do (WideOverQ2). 0: off (default).
#ifndef KSEEK_FA_HD128_FULL_Q1_FROM
#define KSEEK_FA_HD128_FULL_Q1_FROM 0
#endif
// n > 0: at head_dim 128 (not the narrow 80/96) with causal masking and
// whole items, the wide key tiles of the non-causal shapes
// (KSEEK_FA_HD128_FULL_BLOCK_N keys, one Q buffer) where the mean item sees
// at least n keys (seqlen_k - seqlen_q / 2) and the tiles pad seqlen_k by at
// most 5% more than 128-key tiles do; elsewhere 128-key tiles. The item
// trace put the causal 128-key tiles at 1.41-1.44 us each (0.0110-0.0113
// us per key) against 1.86 us per clustered 176-key tile (0.0106) without
// masking, on the H200 (NOTES.md "After v4c, on the device: the item
// trace's first runs"); the diagonal pads about 88 more keys per item.
// Measured on an H100 (NOTES.md v4d): n = 8192 +1.6-1.8% at grid s16384,
// n = 4096 also +0.8-1.6% on prefill q1000 k8192 (7692 keys per mean
// item) but -0.5-0.9% at grid s8192 (4096), n = 6144 +0.5-1.5% on all 8
// scenarios it takes. v4d's default 6144; from v4g 4096, where the
// causal pairs run in clusters (KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS): single
// blocks lost at 4096, clustered pairs gained (grid causal s8192
// +1.7-2.1%); from v4h 3072 (prefill q333 k4097 causal +3.1%). 0: 128-key
// tiles everywhere.
#ifndef KSEEK_FA_HD128_CAUSAL_WIDE_KEYS
#define KSEEK_FA_HD128_CAUSAL_WIDE_KEYS 3072
#endif
#ifndef KSEEK_FA_L2_PROMOTION
#define KSEEK_FA_L2_PROMOTION 3
#endif
// The combine after split keys launched as a programmatic dependent of the
// attention kernel before it: the attention kernel lets it launch as its
// blocks start (griddepcontrol.launch_dependents), and the combine waits
// at its start until that kernel has completed and its partials are
// visible (griddepcontrol.wait), so that its launch and its blocks' start
// overlap the attention kernel's last blocks. A sum of head-dim bits of
// the attention kernel (1 = 64, 2 = 128, 4 = 256, 8 = the D = 192 WGMMA
// kernel; the mma.sync kernels by their D); default 11, all but D = 256
// (measured: decode +2.5%, +9% from 16k keys, split-key prefill +1.5-3%;
// at 256 prefill_q256_k16384 4-5% slower, NOTES.md v3m).
#ifndef KSEEK_FA_PDL
#define KSEEK_FA_PDL 11
#endif
// The WGMMA kernels (bits as KSEEK_FA_PDL) that let the dependent launch
// only once their block's producer has found the queue empty, not as the
// block starts (default 10: head_dim 128 and the D = 192 kernel; measured
// 1.003x over 67 split-key shapes, head_dim 136-192 prefill +1.8-2.5%,
// NOTES.md after v3v).
#ifndef KSEEK_FA_PDL_LATE
#define KSEEK_FA_PDL_LATE 10
#endif
// Splits' loads in flight per warp in the combine behind the decode
// kernel (the others keep one in flight): 4 (default), 8 or 16. 16
// measured 0.973x over the 48 decode shapes (GQA decode -10 to -21%).
#ifndef KSEEK_FA_COMBINE_IN_FLIGHT
#define KSEEK_FA_COMBINE_IN_FLIGHT 4
#endif
// The fewest splits at which the combine behind the decode kernel takes a
// block of kCombineWarps warps per row (warp w the splits w, w + 8, ...)
// instead of a warp: default 5 (v3z; 16 before). Below it a warp walks
// every split, KSEEK_FA_COMBINE_IN_FLIGHT at a time: 14 splits
// (decode_b4_k16384_gqa8) were an LSE read and four rounds of loads from
// L2, where a block per row has one. Measured after v3y (cr5 in
// bench/results/hopper_after_v3y_variants_h200.txt): on the GPU's
// timeline that call's span 26.4 us against 27.7-28.2 for two default
// builds (cuDNN 28.2), 1.003x over the 48 decode shapes (1.036x on that
// one, none under 0.994x).
#ifndef KSEEK_FA_DECODE_ROW_COMBINE_MIN_SPLITS
#define KSEEK_FA_DECODE_ROW_COMBINE_MIN_SPLITS 5
#endif
static_assert(KSEEK_FA_COMBINE_IN_FLIGHT == 4 || KSEEK_FA_COMBINE_IN_FLIGHT == 8 ||
                  KSEEK_FA_COMBINE_IN_FLIGHT == 16,
              "KSEEK_FA_COMBINE_IN_FLIGHT: 4, 8 or 16");
// KSEEK_FA_PDL_END for the mma.sync and decode kernels (bits 1, 2, 4 for
// their D = 64, 128, 256): their combine a programmatic dependent that they
// never let launch early (default 7: all three; 0 launches it early). On
// an H200, 7 measured 1.014x and then 1.004x over the decode shapes,
// within what equal builds moved there; on an H100, 1.053x over the 17
// long-split decode shapes (equal builds within 0.2%; by the GPU's
// timeline 1.06x) and 1.024x / 1.025x over all 48 decode shapes in two
// builds (equal builds 1.001x), prefill, qlong, many-short and heads1
// unchanged (0.999-1.001x): NOTES.md v4b.
#ifndef KSEEK_FA_MMA_PDL_END
#define KSEEK_FA_MMA_PDL_END 7
#endif
// The WGMMA kernels (bits as KSEEK_FA_PDL, whether or not set there) whose
// combine is a programmatic dependent that the attention kernel never
// lets launch early: it launches as the attention grid's last block exits
// (no SM of the combine's blocks waits idle beside attention blocks, and
// the launch's latency is hidden). Default 4: head_dim 256 (measured +0.1 to
// +4.8% on its split-key prefill, 1.004x over 67 split-key shapes; at 128
// and 192 late is as fast or faster, NOTES.md v3x).
#ifndef KSEEK_FA_PDL_END
#define KSEEK_FA_PDL_END 4
#endif
// The head dims (bits as KSEEK_FA_PDL: WgmmaDimBit for the WGMMA kernels,
// HeadDimBit for the mma.sync and decode kernels) whose combine is launched
// as a programmatic dependent of the attention kernel, early or at its end.
constexpr int kWgmmaDependentCombine = KSEEK_FA_PDL | KSEEK_FA_PDL_END;
constexpr int kMmaDependentCombine = KSEEK_FA_PDL | KSEEK_FA_MMA_PDL_END;
// GQA decode at head_dim <= 128 takes the decode kernel with its long
// splits where version 1 would split the keys at least this many ways
// (below it version 1, unless neither splits), by the rows of a row group
// (queries x the query heads of a K/V head): KSEEK_FA_DECODE_GQA_MIN_SPLITS
// for groups of at most 16 rows (one m16 tile), KSEEK_FA_DECODE2_GQA_MIN_SPLITS
// for 17-32 rows (two row tiles per warp with KSEEK_FA_DECODE_TWO_TILES,
// else two 16-row blocks per group). Defaults 2 and 12: v3n's first call
// measured the six groups of at most 16 rows that 2 moves +1-19%
// (b16_k4096 GQA 4/8/16, b4_k16384_gqa4, b64_k2048 gqa16 and gqa8_hd64)
// and the one 32-row group at head_dim 128 0.93x
// (decode_q4_k16000_hd128_gqa8_causal, as v3m's call 4: NOTES.md v3m, v3n).
#ifndef KSEEK_FA_DECODE_GQA_MIN_SPLITS
#define KSEEK_FA_DECODE_GQA_MIN_SPLITS 2
#endif
#ifndef KSEEK_FA_DECODE2_GQA_MIN_SPLITS
#define KSEEK_FA_DECODE2_GQA_MIN_SPLITS 12
#endif
// Blocks per SM that the decode kernel's long splits are planned for with
// two row tiles per warp (R = 2; one-tile blocks plan for one, NOTES.md
// v3g): 1 or 2 (two blocks of 4 warps per SM, twice the splits). Default
// 1: with two-tile blocks at head_dim 128 and the long splits from 2
// (KSEEK_FA_DECODE_TWO_TILES=3, KSEEK_FA_DECODE2_GQA_MIN_SPLITS=2) 2
// measured 0.984x over decode and 1 0.989x; the 32-row group
// decode_q4_k16000_hd128_gqa8_causal 79.0 TFLOP/s on version 1, 76.4 on
// one two-tile block per SM, 70.9 on two (NOTES.md v3q).
#ifndef KSEEK_FA_DECODE2_LONG_BLOCKS
#define KSEEK_FA_DECODE2_LONG_BLOCKS 1
#endif
// Head dims (bits as KSEEK_FA_TMA_STORES: 2 D = 128, 4 D = 256) whose
// decode kernel and version 1 (the mma.sync kernel) run a narrow instance
// for head_dim of at most 3/4 of D (80 and 96 on D = 128, 136-192 on
// D = 256): S, P V and O's rescale over those columns only (the mma.sync
// steps and ldmatrix loads of the zero columns skipped: a quarter of
// each). Default 6 (both) since v4. Measured before
// (bench/results/hopper_after_v3y_variants_h200.txt, calls 3 and 4): the
// decode kernel's 1.002x (decode_b1_k32768_gqa8_hd96 within noise);
// version 1's, where decode_b64_k2048_gqa8_hd96 runs (0.931x of the best
// in v3z's run: 128-row blocks with 8 rows of the group), +5% there (38.0
// us on the GPU's timeline against 39.8-40.2; cuDNN 37.3); v4's final run
// 0.987x of the best. bench/plans/decode_narrow.sh times 0 against it.
#ifndef KSEEK_FA_DECODE_NARROW
#define KSEEK_FA_DECODE_NARROW 6
#endif

namespace {

// ---------------------------------------------------------------------------
// Configuration.

constexpr int kWarps = 8;
constexpr int kThreads = 32 * kWarps;
constexpr int kRowsPerWarp = 16;                 // one m16 MMA tile
constexpr int kBlockM = kRowsPerWarp * kWarps;   // query rows per block
constexpr int kBlockN = 64;                      // keys per tile
constexpr int kMaxSplits = 16;          // of the WGMMA kernel
constexpr int kMaxMmaSplits = 32;       // of the mma.sync kernel
constexpr int kMaxCombineSplits = 128;  // of the decode kernel
constexpr int kDecodeWarps = 4;         // the decode kernel's warps
constexpr int kDecodeThreads = 32 * kDecodeWarps;
constexpr int kDecodeRows = kRowsPerWarp;  // its rows: one m16 tile
constexpr int kDecodeKeys = 16;         // keys per chunk of one warp
constexpr int kDecodeMaxSplitsNoGqa = 16;  // at head_dim <= 128 (LaunchMma)
// Version 1's splits from which GQA decode (head_dim <= 128) takes the
// decode kernel's long splits, by the rows of a row group.
constexpr int DecodeMinSplitsGqa(int64_t rows) {
  return rows <= kDecodeRows ? KSEEK_FA_DECODE_GQA_MIN_SPLITS
                             : KSEEK_FA_DECODE2_GQA_MIN_SPLITS;
}
constexpr int kDecodeMaxSplitsGqa = 64;    // the decode kernel's long splits
constexpr int kDecodeMinTilesGqa = 8;      // key tiles per long split
constexpr int kMinTilesPerSplit = 4;
constexpr int64_t kL2SectionBytes = int64_t(16) << 20;
constexpr int kMinHeadDim = 64;
constexpr int64_t kScratchOFloats = int64_t(8) << 20;  // 32 MB: the most O partials a call splits into
#if KSEEK_FA_TAIL_SPLIT
[[maybe_unused]] constexpr int kTailCounts = 4096;  // a stream's tail counters (KSEEK_FA_TAIL_SPLIT)
[[maybe_unused]] constexpr int64_t kTailOFloats = int64_t(16) << 20;  // 64 MB: the tail segments' partial O
#endif
constexpr int kCombineWarps = 8;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <int D>
struct Config {
  static_assert(D == 64 || D == 128 || D == 256, "head_dim 64, 128 or 256");
  static constexpr int kStages = D == 256 ? 2 : 3;
  static constexpr bool kQInRegisters = D <= 128;
  static constexpr int kMinBlocksPerSm = D == 64 ? 2 : 1;
  static constexpr int kChunks = D / 8;  // 16-byte chunks per row
  static constexpr int kRowBytes = D * 2;
  static constexpr int kQBytes = kBlockM * kRowBytes;
  static constexpr int kTileBytes = kBlockN * kRowBytes;  // K or V of a tile
  static constexpr int kStageBytes = 2 * kTileBytes;
  static constexpr int kSmemBytes = kQBytes + kStages * kStageBytes;
};

// The last error of the calling thread (kseek_error_message).
thread_local const char* g_error = "";

template <typename T>
constexpr bool kIsHalf = std::is_same<T, __half>::value;

#if KSEEK_FA_FAST_LOCATE
// n / d for 0 <= n < 2^31 and 1 <= d < 2^31 as one 32 x 32 -> 64-bit
// multiply and a shift: with l = ceil(log2 d), m = ceil(2^(31 + l) / d) < 2^32
// and n m / 2^(31 + l) = n / d + n e / 2^(31 + l) (0 <= e < 1), whose error
// is below 2^-l <= 1 / d, so the floor is n / d's.
struct FastDiv {
  uint32_t m, shift;
};
inline FastDiv MakeFastDiv(uint32_t d) {
  uint32_t l = 0;
  while ((uint64_t(1) << l) < d) ++l;
  const uint64_t big = uint64_t(1) << (31 + l);
  return FastDiv{uint32_t((big + d - 1) / d), 31 + l};
}
__host__ __device__ __forceinline__ int Divide(int n, FastDiv f) {
  return int((uint64_t(uint32_t(n)) * f.m) >> f.shift);
}
#endif

struct Problem {
  int batch, seqlen_q, seqlen_k, heads_q, heads_kv, causal;
  int head_dim;         // elements per row in memory (<= the kernel's D)
  // The mma.sync kernel's rows: with pack > 1 (GQA), the pack = heads_q /
  // heads_kv query heads that share a K/V head form one row group, row m
  // being query m / pack of head group * pack + m % pack, so a block's 16-
  // row warps hold the heads of one K/V head and read its K/V once; with
  // pack 1 a row group is one query head and row m its query m.
  int pack;
  int q_tiles;          // ceil(seqlen_q / kBlockM)
  int section_pairs;    // (batch, head) pairs per L2 section
  int splits;           // key-range splits per query tile (1: none)
  int combine_warps;    // CombineSplits: warps per row (1 or kCombineWarps)
  int tiles_per_split;  // key tiles per split
  float scale_log2;     // log2(e) / sqrt(head_dim)
#if KSEEK_FA_FAST_LOCATE
  // The WGMMA kernel's divisors of LocateFast, as multiplications: items per
  // section, pairs per section and in the last section, heads, splits.
  FastDiv per_section_div, width_div, last_width_div, heads_div, splits_div;
  FastDiv group_div;  // query heads per K/V head (the producer's K/V head)
  int last_section;
#endif
#if KSEEK_FA_TAIL_SPLIT
  // KSEEK_FA_TAIL_SPLIT: items [0, tail_first) are whole pairs (the
  // clusters' static order); the tail_pairs pairs from there of tail_tiles
  // key tiles each are shared out tail_share tiles per cluster, segment j
  // of cluster c's share being item tail_first + c * tail_segs + j
  // (tail_segs 0: no shares).
  int tail_first, tail_pairs, tail_tiles, tail_share, tail_segs;
#endif
};

// A call's scratch memory (CallScratch, below), the kernels' last
// parameter: the WGMMA kernel's work queue, [0] the next item past the
// first wave and [1] the blocks that found the queue empty (the last of
// those resets both, so each launch starts at 0), and the split-key
// blocks' partial results, [split][row][D] and [split][row] with row =
// (batch * heads_q + head) * seqlen_q + query. (Kept out of Problem: a
// larger Problem moved the mma.sync kernels' register allocation.)
struct Scratch {
  int* queue;
  float* split_o;
  float* split_lse;
#if KSEEK_FA_TAIL_SPLIT
  // The tail segments' counters, one per (tail pair, rank, consumer warp),
  // 0 between calls (KSEEK_FA_TAIL_SPLIT); their partials in split_o and
  // split_lse, [slot][the pair's rows], slot 2c a share's first segment,
  // 2c + 1 its last (TailSlot).
  int* tail_count;
#endif
#if KSEEK_FA_SC_K_GLOBAL
  // The call's K (KSEEK_FA_SC_K_GLOBAL), [batch][key][head][head_dim].
  const void* k;
#endif
};

// Elements per row of q, k, v and o in memory for a kernel compiled for D
// columns: head_dim, which is D itself at the smallest D (only head_dim 64
// runs there), so that those kernels keep it a constant.
template <int D>
__host__ __device__ __forceinline__ int RowElements(const Problem& p) {
  return D == kMinHeadDim ? D : p.head_dim;
}

// ---------------------------------------------------------------------------
// PTX wrappers.

__device__ __forceinline__ uint32_t SharedAddress(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// Programmatic dependent launch (KSEEK_FA_PDL): LaunchDependents lets the
// grid launched after this one with programmatic stream serialisation
// start once every block of this one has run it (once per block is
// enough); GridDependencyWait waits until the grid before this one has
// completed and its memory writes are visible. Both do nothing without
// such a launch.
__device__ __forceinline__ void LaunchDependents() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void GridDependencyWait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// 16 bytes global -> shared; when `valid` is false nothing is read and the
// 16 bytes are zero-filled.
__device__ __forceinline__ void CpAsync16(uint32_t dst, const void* src,
                                          bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst),
               "l"(src), "r"(src_bytes)
               : "memory");
}

__device__ __forceinline__ void CpAsyncCommit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}

template <int kPending>
__device__ __forceinline__ void CpAsyncWait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(kPending) : "memory");
}

// Four 8x8 16-bit matrices; lanes 8i .. 8i+7 give the row addresses of
// matrix i, which lands in r[i].
__device__ __forceinline__ void LdMatrixX4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(addr));
}

// The same, each matrix transposed.
__device__ __forceinline__ void LdMatrixX4Trans(uint32_t (&r)[4],
                                                uint32_t addr) {
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, "
      "[%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(addr));
}

// c += a b for one m16n8k16 tile (A row-major, B column-major, fp32 C).
__device__ __forceinline__ void Mma(float (&c)[4], const uint32_t (&a)[4],
                                    uint32_t b0, uint32_t b1, __nv_bfloat16) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}
__device__ __forceinline__ void Mma(float (&c)[4], const uint32_t (&a)[4],
                                    uint32_t b0, uint32_t b1, __half) {
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

// Two floats rounded to the 16-bit type, `lo` in the low half.
__device__ __forceinline__ uint32_t Pack2(float lo, float hi, __nv_bfloat16) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}
__device__ __forceinline__ uint32_t Pack2(float lo, float hi, __half) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&h);
}

// ---------------------------------------------------------------------------
// Shared-memory tiles: rows of D 16-bit elements, 16-byte chunks swizzled.

template <int D>
__device__ __forceinline__ uint32_t Swizzled(int row, int chunk) {
  return row * Config<D>::kRowBytes + ((chunk ^ (row & 7)) << 4);
}

// Byte offsets of the 16-byte chunks one lane addresses in ldmatrix.x4
// loads that walk a tile in steps of two chunks (16 elements): the lane
// gives row `row_base + lane_row`, chunk `2 * step + lane_chunk`. The
// swizzle only touches the low three chunk bits and lane_row % 8 ==
// lane % 8, so four per-lane offsets cover every step; the rest is
// constant after unrolling.
template <int D>
struct LaneOffsets {
  uint32_t off[4];

  __device__ __forceinline__ LaneOffsets(int lane_row, int lane_chunk) {
#pragma unroll
    for (int m = 0; m < 4; ++m)
      off[m] = lane_row * Config<D>::kRowBytes +
               (((2 * m + lane_chunk) ^ (lane_row & 7)) << 4);
  }
  __device__ __forceinline__ uint32_t At(int row_base, int step) const {
    return row_base * Config<D>::kRowBytes + (step / 4) * 128 + off[step % 4];
  }
};

// Lane patterns: A operands (Q, and P V's B operand read transposed from V)
// take rows lane % 16 and chunk lane / 16; K^T as a B operand takes rows
// lane % 8 + 8 * (lane / 16) and chunk (lane / 8) % 2.
template <int D>
__device__ __forceinline__ LaneOffsets<D> RowMajorOffsets(int lane) {
  return LaneOffsets<D>(lane % 16, lane / 16);
}
template <int D>
__device__ __forceinline__ LaneOffsets<D> KeyOffsets(int lane) {
  return LaneOffsets<D>(lane % 8 + 8 * (lane / 16), (lane / 8) % 2);
}

// Copies rows [0, kRows) of a row-strided global tile into shared memory;
// rows at or past `valid_rows` and the 16-byte chunks at or past
// `valid_chunks` (a head_dim under D) are zero-filled. `src` must be
// readable.
template <typename T, int D, int kRows>
__device__ __forceinline__ void LoadRows(uint32_t dst, const T* src,
                                         int64_t row_stride, int valid_rows,
                                         int valid_chunks) {
  constexpr int kChunks = Config<D>::kChunks;
  static_assert(kRows * kChunks % kThreads == 0, "whole chunks per thread");
  static_assert(kThreads % kChunks == 0, "a thread's chunk is the same in every row");
  const int chunk = threadIdx.x % kChunks;
  const bool chunk_valid = chunk < valid_chunks;
#pragma unroll
  for (int it = 0; it < kRows * kChunks / kThreads; ++it) {
    const int row = (it * kThreads + threadIdx.x) / kChunks;
    const bool valid = chunk_valid && row < valid_rows;
    const T* from = valid ? src + row * row_stride + chunk * 8 : src;
    CpAsync16(dst + Swizzled<D>(row, chunk), from, valid);
  }
}

// ---------------------------------------------------------------------------
// Block and warp work.

struct BlockWork {
  int b, hq, q0;               // batch, query head (mma.sync kernel: row
                               // group), first query row (row)
  int tile_begin, tile_end;    // key tiles [begin, end) of this block
};

// w's key tiles for split `split`, its last query row (of the sequence)
// being `last_row`: the split's range, cut at that row's causal limit.
template <int kN>
__host__ __device__ __forceinline__ void SetKeyTiles(const Problem& p, int last_row,
                                                     int split, BlockWork& w) {
  const int key_end =
      p.causal ? max(0, min(p.seqlen_k, last_row + p.seqlen_k - p.seqlen_q + 1))
               : p.seqlen_k;
  const int key_tiles = (key_end + kN - 1) / kN;
  w.tile_begin = split * p.tiles_per_split;
  w.tile_end = max(w.tile_begin, min(key_tiles, w.tile_begin + p.tiles_per_split));
}

// Work item `index` (the block index, or a persistent block's query tile),
// key split `split`.
// kPacked (the mma.sync kernel): in rows and row groups of p.pack heads.
template <int kN, int kM = kBlockM, bool kPacked = false>
__host__ __device__ BlockWork LocateBlock(const Problem& p, int index, int split) {
  const int heads = kPacked ? p.heads_q / p.pack : p.heads_q;
  const int pairs = p.batch * heads;
  const int per_section = p.section_pairs * p.q_tiles;
  const int section = index / per_section;
  const int rem = index % per_section;
  const int width = min(p.section_pairs, pairs - section * p.section_pairs);
  const int rank = rem / width;
  const int pair = section * p.section_pairs + rem % width;
  const int tile = p.causal ? p.q_tiles - 1 - rank : rank;

  BlockWork w;
  w.b = pair / heads;
  w.hq = pair % heads;
  w.q0 = tile * kM;
  const int last_row = kPacked
      ? (min(w.q0 + kM, p.seqlen_q * p.pack) - 1) / p.pack
      : min(w.q0 + kM, p.seqlen_q) - 1;
  SetKeyTiles<kN>(p, last_row, split, w);
  return w;
}

#if KSEEK_FA_FAST_LOCATE
// LocateBlock of the WGMMA kernel (not packed) for queue item `item` (query
// tile item / splits, split item % splits), its divisions as
// multiplications (Problem's FastDivs, set by LaunchWgmma); `split` set.
template <int kN, int kM>
__device__ __forceinline__ BlockWork LocateFast(const Problem& p, int item, int& split) {
  const int index = Divide(item, p.splits_div);
  split = item - index * p.splits;
  const int per_section = p.section_pairs * p.q_tiles;
  const int section = Divide(index, p.per_section_div);
  const int rem = index - section * per_section;
  const bool last = section == p.last_section;
  const int width =
      last ? p.batch * p.heads_q - section * p.section_pairs : p.section_pairs;
  const int rank = Divide(rem, last ? p.last_width_div : p.width_div);
  const int pair = section * p.section_pairs + rem - rank * width;
  const int tile = p.causal ? p.q_tiles - 1 - rank : rank;
  BlockWork w;
  w.b = Divide(pair, p.heads_div);
  w.hq = pair - w.b * p.heads_q;
  w.q0 = tile * kM;
  SetKeyTiles<kN>(p, min(w.q0 + kM, p.seqlen_q) - 1, split, w);
  return w;
}
#endif

// The WGMMA kernel's queue item `item`: its block, and its key split in
// `split`; kFast: LocateFast (KSEEK_FA_FAST_LOCATE), else LocateBlock.
template <int kN, int kM, bool kFast>
__device__ __forceinline__ BlockWork LocateItem(const Problem& p, int item, int& split) {
#if KSEEK_FA_FAST_LOCATE
  if constexpr (kFast) return LocateFast<kN, kM>(p, item, split);
#endif
  split = item % p.splits;
  return LocateBlock<kN, kM>(p, item / p.splits, split);
}

// Keys a query row sees: [0, limit).
__device__ __forceinline__ int KeyLimit(const Problem& p, int row) {
  return p.causal ? min(p.seqlen_k, row + p.seqlen_k - p.seqlen_q + 1)
                  : p.seqlen_k;
}

// Row m of row group `group` of the mma.sync kernel (Problem::pack).
struct PackedRow {
  int head, query;
};
__device__ __forceinline__ PackedRow RowAt(const Problem& p, int group, int m) {
  return PackedRow{group * p.pack + m % p.pack, m / p.pack};
}

// The mma.sync kernel's Q tile: rows w.q0 .. w.q0 + kBlockM - 1 of row group
// w.hq into shared memory; rows past the group's and chunks past head_dim
// `hd` zero-filled.
template <typename T, int D>
__device__ __forceinline__ void LoadQRows(uint32_t dst, const T* q,
                                          const Problem& p, const BlockWork& w,
                                          int hd) {
  constexpr int kChunks = Config<D>::kChunks;
  const int chunk = threadIdx.x % kChunks;  // the same in every row
  const bool chunk_valid = chunk < hd / 8;
  const int rows_total = p.seqlen_q * p.pack;
#pragma unroll
  for (int it = 0; it < kBlockM * kChunks / kThreads; ++it) {
    const int row = (it * kThreads + threadIdx.x) / kChunks;
    const int m = w.q0 + row;
    const bool valid = chunk_valid && m < rows_total;
    const PackedRow at = RowAt(p, w.hq, valid ? m : 0);
    const T* from =
        q + ((int64_t(w.b) * p.seqlen_q + at.query) * p.heads_q + at.head) * hd +
        chunk * 8;
    CpAsync16(dst + Swizzled<D>(row, chunk), valid ? from : q, valid);
  }
}

// Per-thread state of a warp's 16 rows: this thread holds rows g and g + 8
// (g = lane / 4) and, of each 8-column tile, columns 2 (lane % 4) and +1.
template <int D>
struct WarpState {
  float acc[D / 8][4];  // O, unnormalised
  float row_max[2];     // raw score units
  float row_sum[2];     // this thread's partial sums

  // Before a row group's first key: O = 0, maxima -inf, sums 0.
  __device__ __forceinline__ void Clear() {
#pragma unroll
    for (int d = 0; d < D / 8; ++d)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[d][e] = 0.f;
    row_max[0] = row_max[1] = -INFINITY;
    row_sum[0] = row_sum[1] = 0.f;
  }
};

// The warp's Q fragments (16 rows at q_rows, the first KD of D columns) in
// registers, where Config<D> keeps Q there; nothing otherwise.
template <int D, int KD = D>
__device__ __forceinline__ void LoadQFragments(
    uint32_t (&q_frag)[Config<D>::kQInRegisters ? KD / 16 : 1][4], uint32_t q_rows,
    const LaneOffsets<D>& a_off) {
  if constexpr (Config<D>::kQInRegisters) {
#pragma unroll
    for (int kk = 0; kk < KD / 16; ++kk)
      LdMatrixX4(q_frag[kk], q_rows + a_off.At(0, kk));
  }
}

// S = Q K^T for the warp's 16 rows and the tile's kN keys, over the first
// KD of D columns (the decode kernel's narrow instances: the others hold
// zeros).
template <typename T, int D, int kN = kBlockN, int KD = D>
__device__ __forceinline__ void ComputeScores(
    const uint32_t (&q_frag)[Config<D>::kQInRegisters ? KD / 16 : 1][4],
    uint32_t q_rows, uint32_t k_tile, const LaneOffsets<D>& a_off,
    const LaneOffsets<D>& k_off, float (&s)[kN / 8][4]) {
#pragma unroll
  for (int n = 0; n < kN / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) s[n][e] = 0.f;
#pragma unroll
  for (int kk = 0; kk < KD / 16; ++kk) {
    uint32_t a[4];
    if constexpr (Config<D>::kQInRegisters) {
#pragma unroll
      for (int e = 0; e < 4; ++e) a[e] = q_frag[kk][e];
    } else {
      LdMatrixX4(a, q_rows + a_off.At(0, kk));
    }
#pragma unroll
    for (int np = 0; np < kN / 16; ++np) {
      uint32_t b[4];
      LdMatrixX4(b, k_tile + k_off.At(16 * np, kk));
      Mma(s[2 * np], a, b[0], b[1], T());
      Mma(s[2 * np + 1], a, b[2], b[3], T());
    }
  }
}

// How the WGMMA kernel masks a tile's scores (its `step`).
template <int M>
struct MaskMode {
  static constexpr int kMode = M;
};

// Scores of keys at or past a row's limit become -inf (kN keys from k0),
// each score's key index computed.
template <int kN>
__device__ __forceinline__ void MaskScores(float (&s)[kN / 8][4], int k0,
                                           int lane, int limit0, int limit1) {
#pragma unroll
  for (int n = 0; n < kN / 8; ++n)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int key = k0 + 8 * n + 2 * (lane % 4) + e;
      if (key >= limit0) s[n][e] = -INFINITY;
      if (key >= limit1) s[n][2 + e] = -INFINITY;
    }
}

// 2^x on the MUFU unit: one instruction with subnormal results flushed to
// zero (a probability below 2^-126 of the row's largest). exp2f without
// fast-math adds a range check and two scalings around it.
__device__ __forceinline__ float Exp2(float x) {
#if KSEEK_FA_FAST_EXP2
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
#else
  return exp2f(x);
#endif
}

// The largest of `init` and row i's scores in this lane (i = 0: the lane's
// row lane / 4, i = 1: that row + 8), then over the four lanes of the row.
template <int kN>
__device__ __forceinline__ float RowMax(const float (&s)[kN / 8][4], int i, float init) {
  float mx = init;
#pragma unroll
  for (int n = 0; n < kN / 8; ++n) mx = fmaxf(mx, fmaxf(s[n][2 * i], s[n][2 * i + 1]));
  mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
  return fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
}

// Row i's scores in this lane -> P = 2^(S scale_log2 - base), in place,
// added to `part` (kParts 1: one chain in key order; 4: by key's pair and
// parity, so a sum waits on a quarter of the chain).
template <int kN, int kParts>
__device__ __forceinline__ void ExpRow(float (&s)[kN / 8][4], int i, float scale_log2,
                                       float base, float (&part)[kParts]) {
  static_assert(kParts == 1 || kParts == 4, "one or four partial sums");
#pragma unroll
  for (int n = 0; n < kN / 8; ++n)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const float pe = Exp2(fmaf(s[n][2 * i + e], scale_log2, -base));
      s[n][2 * i + e] = pe;
      part[kParts == 1 ? 0 : 2 * (n % 2) + e] += pe;
    }
}

// Online softmax, scores part: new row maxima, S -> P (unnormalised, in
// place) and the running sums; alpha[i] is the factor by which O of row i
// must then be rescaled (RescaleRows).
//
// kLazy: a row's reference (st.row_max, what P and the sums are relative
// to) moves only when the tile's max passes it by more than
// 2^KSEEK_FA_LAZY_RESCALE_LOG2 in P, so P stays at most that large
// (256: far inside the range of the fp32 sums and O, and rounded to 16
// bits with the same relative error as below 1); the rows that keep
// theirs have alpha 1.
// Returns whether a row of the warp moved (the same in every lane): O
// needs its rescale only then. Without kLazy, true.
// kMaybeEmpty false: the caller knows every row's new maximum is finite
// (a tile of keys valid for all its rows), so the base needs no test.
template <int D, int kN, bool kLazy = false, bool kMaybeEmpty = true>
__device__ __forceinline__ bool SoftmaxScores(float (&s)[kN / 8][4],
                                              WarpState<D>& st,
                                              float scale_log2,
                                              float (&alpha)[2]) {
  bool moved = false;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    float mx = RowMax<kN>(s, i, st.row_max[i]);
    if constexpr (kLazy) {
      // From -inf any finite max moves it (+inf > the bound); -inf to
      // -inf compares NaN, so the row stays at -inf.
      const bool up = (mx - st.row_max[i]) * scale_log2 > float(KSEEK_FA_LAZY_RESCALE_LOG2);
      mx = up ? mx : st.row_max[i];
      moved = moved || up;
    }
    // While a row has seen no key its max is -inf: subtract 0 instead,
    // so exp2(-inf - base) is 0 rather than NaN.
    const float base = kMaybeEmpty && mx == -INFINITY ? 0.f : mx * scale_log2;
    alpha[i] = Exp2(st.row_max[i] * scale_log2 - base);
    st.row_max[i] = mx;
    float sum[1] = {0.f};
    ExpRow<kN>(s, i, scale_log2, base, sum);
    st.row_sum[i] = st.row_sum[i] * alpha[i] + sum[0];
  }
  if constexpr (kLazy) return __any_sync(0xffffffffu, moved);
  return true;
}

// The softmax of a tile against the rows' current references, without the
// tile's maxima (KSEEK_FA_SUM_CHECK): S -> P in place and each thread's sums
// of the tile (`tile`), four partial sums per row so that the test waits on
// a short chain. Returns whether every lane's sums are at most
// 2^KSEEK_FA_LAZY_RESCALE_LOG2 (the same in every lane); only then does it
// add them to the running sums, and the references and O stand. A row that
// has seen no key (reference -inf) gets +inf or NaN, and so fails, as does
// any P past the bound, inf or NaN (RebaseScores, else S again).
template <int D, int kN>
__device__ __forceinline__ bool SumCheckScores(float (&s)[kN / 8][4],
                                               WarpState<D>& st,
                                               float scale_log2,
                                               float (&tile)[2]) {
  bool ok = true;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    float part[4] = {0.f, 0.f, 0.f, 0.f};
    ExpRow<kN>(s, i, scale_log2, st.row_max[i] * scale_log2, part);
    tile[i] = (part[0] + part[1]) + (part[2] + part[3]);
    // false for NaN
    ok = ok && tile[i] <= float(1 << KSEEK_FA_LAZY_RESCALE_LOG2);
  }
  if (__any_sync(0xffffffffu, !ok)) return false;
#pragma unroll
  for (int i = 0; i < 2; ++i) st.row_sum[i] += tile[i];
  return true;
}

// After SumCheckScores failed with every lane's sums finite (some P past
// the bound, none inf or NaN): each row whose largest P (over its four
// lanes) passed 1 moves its reference up by e = log2 of it, its P and sums
// scaled by alpha = 2^-e (O by the caller, RescaleRows); the other rows
// keep theirs (alpha 1). Returns false, changing nothing, where a lane's
// sums are not finite: then S must be computed again.
template <int D, int kN>
__device__ __forceinline__ bool RebaseScores(float (&s)[kN / 8][4],
                                             WarpState<D>& st,
                                             float scale_log2,
                                             const float (&tile)[2],
                                             float (&alpha)[2]) {
  // false for inf and NaN
  const bool finite = tile[0] < INFINITY && tile[1] < INFINITY;
  if (__any_sync(0xffffffffu, !finite)) return false;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const float mx = RowMax<kN>(s, i, 0.f);
    const float up = mx > 1.f ? log2f(mx) : 0.f;
    const float r = Exp2(-up);
    alpha[i] = r;
    st.row_max[i] += up / scale_log2;
#pragma unroll
    for (int n = 0; n < kN / 8; ++n) {
      s[n][2 * i] *= r;
      s[n][2 * i + 1] *= r;
    }
    st.row_sum[i] = (st.row_sum[i] + tile[i]) * r;
  }
  return true;
}

// O's first KD columns (the others, where the caller keeps them 0, need
// none) by the rows' alpha.
template <int D, int KD = D>
__device__ __forceinline__ void RescaleRows(WarpState<D>& st,
                                            const float (&alpha)[2]) {
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int d = 0; d < KD / 8; ++d) {
      st.acc[d][2 * i] *= alpha[i];
      st.acc[d][2 * i + 1] *= alpha[i];
    }
}

// Online softmax: new row maxima, rescale of O (its first KD columns) and
// the sums, S -> P.
template <int D, int kN, int KD = D>
__device__ __forceinline__ void UpdateSoftmax(float (&s)[kN / 8][4],
                                              WarpState<D>& st,
                                              float scale_log2) {
  float alpha[2];
  SoftmaxScores<D, kN>(s, st, scale_log2, alpha);
  RescaleRows<D, KD>(st, alpha);
}

// O += P V, P taken from the score registers (kN keys), over O's first KD
// columns.
template <typename T, int D, int kN = kBlockN, int KD = D>
__device__ __forceinline__ void AccumulatePV(const float (&s)[kN / 8][4],
                                             uint32_t v_tile,
                                             const LaneOffsets<D>& v_off,
                                             float (&acc)[D / 8][4]) {
#pragma unroll
  for (int kk = 0; kk < kN / 16; ++kk) {
    const uint32_t a[4] = {Pack2(s[2 * kk][0], s[2 * kk][1], T()),
                           Pack2(s[2 * kk][2], s[2 * kk][3], T()),
                           Pack2(s[2 * kk + 1][0], s[2 * kk + 1][1], T()),
                           Pack2(s[2 * kk + 1][2], s[2 * kk + 1][3], T())};
#pragma unroll
    for (int dp = 0; dp < KD / 16; ++dp) {
      uint32_t b[4];
      LdMatrixX4Trans(b, v_tile + v_off.At(16 * kk, dp));
      Mma(acc[2 * dp], a, b[0], b[1], T());
      Mma(acc[2 * dp + 1], a, b[2], b[3], T());
    }
  }
}

// A head_dim's bit in the switches that take a sum of head dims
// (KSEEK_FA_Q_PER_CONSUMER, KSEEK_FA_WIDE_STORES, KSEEK_FA_TMA_STORES,
// KSEEK_FA_FAST_EPILOGUE, ...): 1, 2 or 4 (D = 192, KSEEK_FA_D192, takes
// 256's).
constexpr int HeadDimBit(int d) { return d == 64 ? 1 : d == 128 ? 2 : 4; }
// The WGMMA kernel's bit in the switches whose D = 192 kernel has one of
// its own (8: KSEEK_FA_FAST_LOCATE, KSEEK_FA_LAZY_RESCALE, ...).
constexpr int WgmmaDimBit(int d) { return d == 192 ? 8 : HeadDimBit(d); }
// Whether the WGMMA kernel of D runs the tail's shares as a grid of their
// own (KSEEK_FA_TAIL_LAUNCHES).
template <int D>
constexpr bool kTailLaunches = (KSEEK_FA_TAIL_LAUNCHES & WgmmaDimBit(D)) != 0;

template <int D>
constexpr bool kFastEpilogue = (KSEEK_FA_FAST_EPILOGUE & HeadDimBit(D)) != 0;

// LSE of a row from its running max (raw score units) and its sum of
// exp2(score * scale_log2 - max * scale_log2); -inf when it saw no key.
template <int D>
__device__ __forceinline__ float RowLse(float row_max, float total,
                                        float scale_log2) {
  if constexpr (kFastEpilogue<D>) {
    float lg;
    asm("lg2.approx.ftz.f32 %0, %1;\n" : "=f"(lg) : "f"(total));
    return total > 0.f ? (row_max * scale_log2 + lg) * kLn2 : -INFINITY;
  } else {
    return total > 0.f ? (row_max * scale_log2 + log2f(total)) * kLn2
                       : -INFINITY;
  }
}

// 1 / (a row's sum), 0 for a row that saw no key (KSEEK_FA_FAST_EPILOGUE:
// on the MUFU unit; a sum that saw a key is at least 1).
template <int D>
__device__ __forceinline__ float RowInverse(float total) {
  if constexpr (kFastEpilogue<D>) {
    float inv;
    asm("rcp.approx.ftz.f32 %0, %1;\n" : "=f"(inv) : "f"(total));
    return total > 0.f ? inv : 0.f;
  } else {
    return total > 0.f ? 1.f / total : 0.f;
  }
}

// Final O and LSE of the warp's rows: O staged through the warp's own Q
// rows of shared memory (`rows`, generic pointer), then 16-byte stores.
template <typename T, int D>
__device__ void StoreOutput(const Problem& p, const BlockWork& w,
                            const WarpState<D>& st, float total0,
                            float total1, int warp, int lane,
                            unsigned char* rows, T* o, float* lse) {
  const float inv[2] = {RowInverse<D>(total0),
                        RowInverse<D>(total1)};
  const int g = lane / 4;
  __syncwarp();
#pragma unroll
  for (int n = 0; n < D / 8; ++n)
#pragma unroll
    for (int i = 0; i < 2; ++i)
      *reinterpret_cast<uint32_t*>(rows + Swizzled<D>(g + 8 * i, n) +
                                   4 * (lane % 4)) =
          Pack2(st.acc[n][2 * i] * inv[i], st.acc[n][2 * i + 1] * inv[i], T());
  __syncwarp();
  const int first = w.q0 + kRowsPerWarp * warp;
  constexpr int kChunks = Config<D>::kChunks;
  static_assert(32 % kChunks == 0, "a lane's chunk is the same in every row");
  const int chunk = lane % kChunks;
  const bool chunk_valid = 8 * chunk < RowElements<D>(p);  // not a padding column
  const int rows_total = p.seqlen_q * p.pack;  // of the row group
#pragma unroll
  for (int it = 0; it < kRowsPerWarp * kChunks / 32; ++it) {
    const int r = (32 * it + lane) / kChunks;
    if (first + r >= rows_total || !chunk_valid) continue;
    const uint4 val =
        *reinterpret_cast<const uint4*>(rows + Swizzled<D>(r, chunk));
    const PackedRow at = RowAt(p, w.hq, first + r);
    T* out = o + ((int64_t(w.b) * p.seqlen_q + at.query) * p.heads_q + at.head) *
                     RowElements<D>(p) +
             chunk * 8;
    *reinterpret_cast<uint4*>(out) = val;
  }
  if (lane % 4 == 0) {
    const float totals[2] = {total0, total1};
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int m = first + g + 8 * i;
      if (m >= rows_total) continue;
      const PackedRow at = RowAt(p, w.hq, m);
      lse[(int64_t(w.b) * p.heads_q + at.head) * p.seqlen_q + at.query] =
          RowLse<D>(st.row_max[i], totals[i], p.scale_log2);
    }
  }
}

// O in 16-byte stores (KSEEK_FA_WIDE_STORES): each quad of lanes (one row;
// two columns of each 8-column group per lane) swaps its words so that a
// lane holds all 8 columns of every fourth group: a quarter of the store
// instructions, each quad filling whole 32-byte sectors, where 4-byte
// stores fill half of each.
template <typename T, int D>
__device__ void StoreOutputWide(const Problem& p, const BlockWork& w,
                                const WarpState<D>& st, float total0,
                                float total1, int warp, int lane, T* o,
                                float* lse) {
  static_assert(D % 32 == 0, "blocks of 4 groups of 8 columns");
  const float totals[2] = {total0, total1};
  const int first = w.q0 + kRowsPerWarp * warp;
  const bool lo1 = (lane & 1) == 0, lo2 = (lane & 2) == 0;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    // Nothing to do (or shuffle) where all 8 rows of the warp's half are
    // past seqlen_q (the same for every lane).
    if (first + 8 * i >= p.seqlen_q) break;
    const int row = first + lane / 4 + 8 * i;
    const float inv = RowInverse<D>(totals[i]);
    uint32_t x[D / 8];
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      x[n] = Pack2(st.acc[n][2 * i] * inv, st.acc[n][2 * i + 1] * inv, T());
    // Per block of 4 groups, a 4 x 4 transpose across the quad (lane j
    // gets the words of group 4 b + j from lanes 0..3, in order): swap 2 x 2
    // blocks with the lane 2 apart, then single words with the lane 1
    // apart. Every lane shuffles, also on rows past seqlen_q.
#pragma unroll
    for (int b = 0; b < D / 32; ++b) {
      uint32_t* const y = x + 4 * b;
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        const uint32_t got =
            __shfl_xor_sync(0xffffffffu, lo2 ? y[k + 2] : y[k], 2);
        if (lo2) y[k + 2] = got; else y[k] = got;
      }
#pragma unroll
      for (int k = 0; k < 4; k += 2) {
        const uint32_t got =
            __shfl_xor_sync(0xffffffffu, lo1 ? y[k + 1] : y[k], 1);
        if (lo1) y[k + 1] = got; else y[k] = got;
      }
    }
    if (row >= p.seqlen_q) continue;
    T* const out =
        o + ((int64_t(w.b) * p.seqlen_q + row) * p.heads_q + w.hq) * RowElements<D>(p);
#pragma unroll
    for (int b = 0; b < D / 32; ++b)
      if (8 * (4 * b + lane % 4) < RowElements<D>(p))  // not a padding column
        *reinterpret_cast<uint4*>(out + 8 * (4 * b + lane % 4)) =
            make_uint4(x[4 * b], x[4 * b + 1], x[4 * b + 2], x[4 * b + 3]);
    if (lane % 4 == 0)
      lse[(int64_t(w.b) * p.heads_q + w.hq) * p.seqlen_q + row] =
          RowLse<D>(st.row_max[i], totals[i], p.scale_log2);
  }
}

// Final O and LSE of the warp's rows straight from registers: each thread
// stores its pairs of columns (4 bytes) of rows g and g + 8.
template <typename T, int D>
__device__ void StoreOutputDirect(const Problem& p, const BlockWork& w,
                                  const WarpState<D>& st, float total0,
                                  float total1, int warp, int lane, T* o,
                                  float* lse) {
  const float totals[2] = {total0, total1};
  const int first = w.q0 + kRowsPerWarp * warp;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int row = first + lane / 4 + 8 * i;
    if (row >= p.seqlen_q) continue;
    const float inv = RowInverse<D>(totals[i]);
    T* out = o + ((int64_t(w.b) * p.seqlen_q + row) * p.heads_q + w.hq) *
                     RowElements<D>(p) +
             2 * (lane % 4);
#pragma unroll
    for (int n = 0; n < D / 8; ++n)
      if (8 * n < RowElements<D>(p))  // not a padding column
        *reinterpret_cast<uint32_t*>(out + 8 * n) =
            Pack2(st.acc[n][2 * i] * inv, st.acc[n][2 * i + 1] * inv, T());
    if (lane % 4 == 0)
      lse[(int64_t(w.b) * p.heads_q + w.hq) * p.seqlen_q + row] =
          RowLse<D>(st.row_max[i], totals[i], p.scale_log2);
  }
}

// Row i (0 or 1) of the warp's fragment, normalised O (fp32) and its LSE,
// into row `index` of the partials (StorePartial, StoreTailPart).
template <int D, int KO>
__device__ __forceinline__ void StorePartialRow(const Problem& p, const Scratch& scratch,
                                                const WarpState<KO>& st, float total, int i,
                                                int64_t index, int lane) {
  const float inv = RowInverse<D>(total);
  float* out = scratch.split_o + index * D + 2 * (lane % 4);
#pragma unroll
  for (int n = 0; n < KO / 8; ++n)
    *reinterpret_cast<float2*>(out + 8 * n) =
        make_float2(st.acc[n][2 * i] * inv, st.acc[n][2 * i + 1] * inv);
  if (lane % 4 == 0) scratch.split_lse[index] = RowLse<D>(st.row_max[i], total, p.scale_log2);
}

// Normalised partial O (fp32) and LSE of the warp's rows for this split
// (kPacked: rows of the mma.sync kernel's row groups).
// KO: the columns of O held (the partials' rows keep D columns; those
// past KO are not written, and CombineSplits stores none of them).
template <int D, bool kPacked = false, int KO = D>
__device__ void StorePartial(const Problem& p, const Scratch& scratch, const BlockWork& w,
                             const WarpState<KO>& st, float total0,
                             float total1, int warp, int lane, int split) {
  const int64_t rows_total = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  const float totals[2] = {total0, total1};
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int m = w.q0 + kRowsPerWarp * warp + lane / 4 + 8 * i;
    if (m >= (kPacked ? p.seqlen_q * p.pack : p.seqlen_q)) continue;
    const PackedRow r = kPacked ? RowAt(p, w.hq, m) : PackedRow{w.hq, m};
    const int64_t index = split * rows_total +
                          (int64_t(w.b) * p.heads_q + r.head) * p.seqlen_q +
                          r.query;
    StorePartialRow<D>(p, scratch, st, totals[i], i, index, lane);
  }
}

#if KSEEK_FA_TAIL_SPLIT
// Segment j of cluster c's share (KSEEK_FA_TAIL_SPLIT): its tail pair (from
// 0) and key tiles [begin, end) of that pair's; false where the share has
// no j-th segment.
__host__ __device__ __forceinline__ bool TailSegment(const Problem& p, int c, int j, int& pair,
                                                     int& begin, int& end) {
  const int start = c * p.tail_share;
  const int stop = min(start + p.tail_share, p.tail_pairs * p.tail_tiles);
  pair = start / p.tail_tiles + j;
  const int first = pair * p.tail_tiles;
  begin = max(start, first) - first;
  end = min(stop, first + p.tail_tiles) - first;
  return begin < end;
}

// The partial slot of cluster c's segment on tail pair `pair`: 2c for its
// share's first segment, 2c + 1 for a later one (only the first and the
// last can hold part of a pair).
__device__ __forceinline__ int TailSlot(const Problem& p, int c, int pair) {
  return 2 * c + (pair > c * p.tail_share / p.tail_tiles ? 1 : 0);
}

// A tail segment's rows: the warp's normalised O and LSE into partial slot
// `slot` of kPairRows rows (the cluster's two query tiles), at the warp's
// rows (`pair_row`: its first row's in the pair, `first_row` in the
// sequence).
template <int D, int KO, int kPairRows>
__device__ void StoreTailPart(const Problem& p, const Scratch& scratch, const WarpState<KO>& st,
                              const float (&total)[2], int slot, int pair_row, int first_row,
                              int lane) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    if (first_row + lane / 4 + 8 * i >= p.seqlen_q) continue;
    StorePartialRow<D>(p, scratch, st, total[i], i,
                       int64_t(slot) * kPairRows + pair_row + lane / 4 + 8 * i, lane);
  }
}

// The last segment of tail pair `pair` (KSEEK_FA_TAIL_SPLIT): every
// segment's partials of the warp's rows (clusters c_lo .. c_hi, its own
// among them) combined into O and the LSE in memory, in registers of their
// own: the wgmma accumulators are not touched in a branch (ptxas would
// serialise every wgmma of the kernel).
template <typename T, int D, int KO, int kPairRows>
__device__ void CombineTailRows(const Problem& p, const Scratch& scratch, const BlockWork& w,
                                int pair, int c_lo, int c_hi, int pair_row, int first_row,
                                int lane, T* o, float* lse) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int m = first_row + lane / 4 + 8 * i;
    if (m >= p.seqlen_q) continue;
    const int64_t row = pair_row + lane / 4 + 8 * i;
    float top = -INFINITY;
    for (int c = c_lo; c <= c_hi; ++c)
      top = fmaxf(top, __ldcg(scratch.split_lse + int64_t(TailSlot(p, c, pair)) * kPairRows + row));
    float sum = 0.f;
    float out[KO / 8][2];
#pragma unroll
    for (int n = 0; n < KO / 8; ++n) out[n][0] = out[n][1] = 0.f;
    if (top != -INFINITY) {
      for (int c = c_lo; c <= c_hi; ++c) {
        const int64_t index = int64_t(TailSlot(p, c, pair)) * kPairRows + row;
        const float weight = expf(__ldcg(scratch.split_lse + index) - top);
        sum += weight;
        const float* src = scratch.split_o + index * D + 2 * (lane % 4);
#pragma unroll
        for (int n = 0; n < KO / 8; ++n) {
          const float2 x = __ldcg(reinterpret_cast<const float2*>(src + 8 * n));
          out[n][0] += weight * x.x;
          out[n][1] += weight * x.y;
        }
      }
    }
    const float inv = sum > 0.f ? 1.f / sum : 0.f;
    T* const dst = o + ((int64_t(w.b) * p.seqlen_q + m) * p.heads_q + w.hq) * RowElements<D>(p) +
                   2 * (lane % 4);
#pragma unroll
    for (int n = 0; n < KO / 8; ++n)
      if (8 * n + 2 * (lane % 4) < RowElements<D>(p))  // not a padding column
        *reinterpret_cast<uint32_t*>(dst + 8 * n) = Pack2(out[n][0] * inv, out[n][1] * inv, T());
    if (lane % 4 == 0)
      lse[(int64_t(w.b) * p.heads_q + w.hq) * p.seqlen_q + m] =
          top == -INFINITY ? -INFINITY : top + logf(sum);
  }
}

// The segment holding tail pair `pair`'s first key tiles (cluster c_lo's):
// the stored rows of the pair's other segments (clusters c_lo + 1 ..
// c_hi, at most two) merged into the warp's registers, its running max
// and the rows' totals moved to the largest of its own and their LSEs.
// Row by row and segment by segment, so that few loads are in flight
// beside the accumulators.
template <int D, int KO, int kPairRows>
__device__ __forceinline__ void MergeTailRows(const Problem& p, const Scratch& scratch,
                                              WarpState<KO>& st, float (&total)[2], int pair,
                                              int c_lo, int c_hi, int pair_row, int lane) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int row = pair_row + lane / 4 + 8 * i;
    const float own = st.row_max[i] * p.scale_log2;  // in log2 units, as the LSEs below
    float lse2[2];
#pragma unroll
    for (int j = 0; j < 2; ++j)
      lse2[j] = c_lo + 1 + j <= c_hi
                    ? __ldcg(scratch.split_lse + TailSlot(p, c_lo + 1 + j, pair) * kPairRows + row) *
                          kLog2e
                    : -INFINITY;
    const float top = fmaxf(own, fmaxf(lse2[0], lse2[1]));
    if (top == -INFINITY) continue;
    const float scale = exp2f(own - top);
    total[i] *= scale;
#pragma unroll
    for (int n = 0; n < KO / 8; ++n) {
      st.acc[n][2 * i] *= scale;
      st.acc[n][2 * i + 1] *= scale;
    }
#pragma unroll
    for (int j = 0; j < 2; ++j) {
      if (c_lo + 1 + j > c_hi) break;
      const float weight = exp2f(lse2[j] - top);
      total[i] += weight;
      const float* src =
          scratch.split_o + (TailSlot(p, c_lo + 1 + j, pair) * kPairRows + row) * D + 2 * (lane % 4);
#pragma unroll
      for (int n = 0; n < KO / 8; ++n) {
        const float2 x = __ldcg(reinterpret_cast<const float2*>(src + 8 * n));
        st.acc[n][2 * i] += weight * x.x;
        st.acc[n][2 * i + 1] += weight * x.y;
      }
    }
    st.row_max[i] = top / p.scale_log2;
  }
}
#endif

// ---------------------------------------------------------------------------
// The attention kernel. KD < D (KSEEK_FA_DECODE_NARROW): S, P V and O's
// rescale over the first KD columns only, where head_dim is at most KD.

template <typename T, int D, int KD = D>
__global__ void __launch_bounds__(kThreads, Config<D>::kMinBlocksPerSm)
    AttentionForward(Problem p, const T* __restrict__ q,
                     const T* __restrict__ k, const T* __restrict__ v,
                     T* __restrict__ o, float* __restrict__ lse, Scratch scratch) {
  if constexpr ((KSEEK_FA_PDL & ~KSEEK_FA_MMA_PDL_END & HeadDimBit(D)) != 0)
    LaunchDependents();  // the combine's launch
  using C = Config<D>;
  extern __shared__ __align__(128) unsigned char smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // Rows and row groups (Problem::pack): w.hq is the row group.
  const BlockWork w = LocateBlock<kBlockN, kBlockM, true>(p, blockIdx.x, blockIdx.y);
  const int rows_total = p.seqlen_q * p.pack;  // of the row group

  const int hd = RowElements<D>(p);  // in memory; columns hd .. D are zero
  const int64_t kv_stride = int64_t(p.heads_kv) * hd;  // between keys
  const int hkv = w.hq * p.pack / (p.heads_q / p.heads_kv);
  const T* k_head = k + (int64_t(w.b) * p.seqlen_k * p.heads_kv + hkv) * hd;
  const T* v_head = v + (int64_t(w.b) * p.seqlen_k * p.heads_kv + hkv) * hd;

  const uint32_t q_smem = SharedAddress(smem);
  const uint32_t kv_smem = q_smem + C::kQBytes;
  auto load_kv = [&](int tile) {
    const uint32_t stage =
        kv_smem + ((tile - w.tile_begin) % C::kStages) * C::kStageBytes;
    const int64_t first = int64_t(tile) * kBlockN * kv_stride;
    const int valid = p.seqlen_k - tile * kBlockN;
    LoadRows<T, D, kBlockN>(stage, k_head + first, kv_stride, valid, hd / 8);
    LoadRows<T, D, kBlockN>(stage + C::kTileBytes, v_head + first, kv_stride,
                            valid, hd / 8);
  };

  LoadQRows<T, D>(q_smem, q, p, w, hd);
  CpAsyncCommit();
#pragma unroll
  for (int s = 0; s < C::kStages - 1; ++s) {
    if (w.tile_begin + s < w.tile_end) load_kv(w.tile_begin + s);
    CpAsyncCommit();
  }
  CpAsyncWait<C::kStages - 1>();  // Q has landed
  __syncthreads();

  const uint32_t q_rows = q_smem + warp * kRowsPerWarp * C::kRowBytes;
  const LaneOffsets<D> a_off = RowMajorOffsets<D>(lane);
  const LaneOffsets<D> k_off = KeyOffsets<D>(lane);
  static_assert(KD == D || (KD == D / 4 * 3 && D >= 128), "narrow: 3/4 of D = 128 or 256");
  uint32_t q_frag[C::kQInRegisters ? KD / 16 : 1][4];
  LoadQFragments<D, KD>(q_frag, q_rows, a_off);

  WarpState<D> st;
  st.Clear();

  // Keys this warp's rows see: the first row [0, mask_from), the last valid
  // row [0, key_end); none when the warp has no row in the row group.
  // (A row's query is m / pack.)
  const int first_row = w.q0 + kRowsPerWarp * warp;
  const int warp_key_end =
      first_row >= rows_total
          ? 0
          : KeyLimit(p, (min(first_row + kRowsPerWarp, rows_total) - 1) / p.pack);
  const int warp_mask_from = KeyLimit(p, first_row / p.pack);
  const int limit0 = KeyLimit(p, (first_row + lane / 4) / p.pack);
  const int limit1 = KeyLimit(p, (first_row + lane / 4 + 8) / p.pack);

  for (int j = w.tile_begin; j < w.tile_end; ++j) {
    CpAsyncWait<C::kStages - 2>();  // tile j has landed
    __syncthreads();                // ... for all, and tile j - 1 is free
    if (j + C::kStages - 1 < w.tile_end) load_kv(j + C::kStages - 1);
    CpAsyncCommit();
    const int k0 = j * kBlockN;
    if (k0 >= warp_key_end) continue;  // no row of this warp sees the tile
    const uint32_t k_tile =
        kv_smem + ((j - w.tile_begin) % C::kStages) * C::kStageBytes;
    float s[kBlockN / 8][4];
    ComputeScores<T, D, kBlockN, KD>(q_frag, q_rows, k_tile, a_off, k_off, s);
    if (k0 + kBlockN > warp_mask_from)
      MaskScores<kBlockN>(s, k0, lane, limit0, limit1);
    UpdateSoftmax<D, kBlockN, KD>(s, st, p.scale_log2);
    AccumulatePV<T, D, kBlockN, KD>(s, k_tile + C::kTileBytes, a_off, st.acc);
  }

  float total[2];
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    total[i] = st.row_sum[i];
    total[i] += __shfl_xor_sync(0xffffffffu, total[i], 1);
    total[i] += __shfl_xor_sync(0xffffffffu, total[i], 2);
  }
  if (p.splits == 1)
    StoreOutput<T, D>(p, w, st, total[0], total[1], warp, lane,
                      smem + warp * kRowsPerWarp * C::kRowBytes, o, lse);
  else
    StorePartial<D, true>(p, scratch, w, st, total[0], total[1], warp, lane, blockIdx.y);
}

// ---------------------------------------------------------------------------
// The decode kernel: few rows per row group, the keys split between warps.

// Its shared memory: Q (16 rows, or 32 with two row tiles per warp: R),
// then per warp a ring of K/V chunks; after the key loop the same bytes
// hold the warps' partial O, maxima and sums for the merge.
template <int D, int R = 1>
struct DecodeConfig {
  static_assert(D == 64 || D == 128 || D == 256, "head_dim 64, 128 or 256");
  static_assert(R == 1 || (R == 2 && D <= 128), "two row tiles up to head_dim 128");
  static constexpr int kWarps = kDecodeWarps;
  static constexpr int kBlockThreads = 32 * kWarps;
  static constexpr int kRows = kDecodeRows * R;  // a block's rows
  static constexpr int kStages = D == 64 ? 4 : 3;
  static constexpr int kMinBlocksPerSm =
      R == 2 ? (D == 64 ? 2 : 1) : D == 64 ? 3 : D == 128 ? 2 : 1;
  // The merge's threads per row, each 8 columns at a time.
  static constexpr int kThreadsPerRow = kBlockThreads / kRows;
  static constexpr int kRowBytes = D * 2;
  static constexpr int kQBytes = kRows * kRowBytes;
  static constexpr int kChunkBytes = kDecodeKeys * kRowBytes;  // K or V
  static constexpr int kStageBytes = 2 * kChunkBytes;
  static constexpr int kWarpBytes = kStages * kStageBytes;
  static constexpr int kMergeBytes = kWarps * kRows * (D + 2) * 4;
  static constexpr int kRingBytes = kWarps * kWarpBytes;
  static constexpr int kSmemBytes =
      kQBytes + (kRingBytes > kMergeBytes ? kRingBytes : kMergeBytes);
};

// Copies a chunk of kDecodeKeys rows of a row-strided global tile into
// shared memory with the 32 lanes of one warp; rows at or past
// `valid_rows` and chunks at or past `valid_chunks` are zero-filled.
template <typename T, int D>
__device__ __forceinline__ void LoadChunkRows(uint32_t dst, const T* src,
                                              int64_t row_stride,
                                              int valid_rows, int valid_chunks,
                                              int lane) {
  constexpr int kChunks = Config<D>::kChunks;
  static_assert(32 % kChunks == 0, "a lane's chunk is the same in every row");
  const int chunk = lane % kChunks;
  const bool chunk_valid = chunk < valid_chunks;
#pragma unroll
  for (int it = 0; it < kDecodeKeys * kChunks / 32; ++it) {
    const int row = (it * 32 + lane) / kChunks;
    const bool valid = chunk_valid && row < valid_rows;
    const T* from = valid ? src + row * row_stride + chunk * 8 : src;
    CpAsync16(dst + Swizzled<D>(row, chunk), from, valid);
  }
}

// The block's Q: rows w.q0 .. w.q0 + kRows - 1 of row group w.hq
// (Problem::pack); rows past the group's and chunks past head_dim `hd`
// zero-filled.
template <typename T, int D, int kRows = kDecodeRows>
__device__ __forceinline__ void LoadDecodeQ(uint32_t dst, const T* q,
                                            const Problem& p,
                                            const BlockWork& w, int hd) {
  constexpr int kChunks = Config<D>::kChunks;
  const int rows_total = p.seqlen_q * p.pack;
  for (int i = threadIdx.x; i < kRows * kChunks; i += kDecodeThreads) {
    const int row = i / kChunks, chunk = i % kChunks;
    const int m = w.q0 + row;
    const bool valid = chunk < hd / 8 && m < rows_total;
    const PackedRow at = RowAt(p, w.hq, valid ? m : 0);
    const T* from =
        q + ((int64_t(w.b) * p.seqlen_q + at.query) * p.heads_q + at.head) * hd +
        chunk * 8;
    CpAsync16(dst + Swizzled<D>(row, chunk), valid ? from : q, valid);
  }
}

// One block of kDecodeWarps warps per 16 rows of a row group (R = 2: per
// 32 rows, two m16 row tiles per warp over the same K/V chunk, so that K/V
// is read once for them) and key split; every warp holds all the block's
// rows and takes every kWarps-th chunk of kDecodeKeys keys of the
// block's range, with its own cp.async ring and online softmax; at the end
// the warps' partial results are merged through shared memory (and, with
// split keys, written as the split's partial for CombineSplits). KD < D
// (KSEEK_FA_DECODE_NARROW): S, P V and O's rescale over the first KD
// columns only, where head_dim is at most KD (the others are zeros in Q,
// K and V, and O's stay 0).
template <typename T, int D, int R = 1, int KD = D>
__global__ void __launch_bounds__(DecodeConfig<D, R>::kBlockThreads,
                                  DecodeConfig<D, R>::kMinBlocksPerSm)
    AttentionDecode(Problem p, const T* __restrict__ q,
                    const T* __restrict__ k, const T* __restrict__ v,
                    T* __restrict__ o, float* __restrict__ lse, Scratch scratch) {
  if constexpr ((KSEEK_FA_PDL & ~KSEEK_FA_MMA_PDL_END & HeadDimBit(D)) != 0)
    LaunchDependents();  // the combine's launch
  using C = DecodeConfig<D, R>;
  constexpr int kRows = C::kRows;
  extern __shared__ __align__(128) unsigned char smem[];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const BlockWork w =
      LocateBlock<kBlockN, kRows, true>(p, blockIdx.x, blockIdx.y);
  const int rows_total = p.seqlen_q * p.pack;  // of the row group
  const int last_row = min(w.q0 + kRows, rows_total) - 1;
  const int key_end = max(0, KeyLimit(p, last_row / p.pack));
  const int chunk_begin = w.tile_begin * (kBlockN / kDecodeKeys);
  const int chunk_end =
      min(w.tile_end * (kBlockN / kDecodeKeys),
          (key_end + kDecodeKeys - 1) / kDecodeKeys);
  // This warp's chunks: chunk_begin + warp + kBlockWarps * i, i < chunks.
  constexpr int kBlockWarps = C::kWarps;
  const int first_chunk = chunk_begin + warp;
  const int chunks =
      first_chunk < chunk_end
          ? (chunk_end - first_chunk + kBlockWarps - 1) / kBlockWarps
          : 0;

  const int hd = RowElements<D>(p);  // in memory; columns hd .. D are zero
  const int64_t kv_stride = int64_t(p.heads_kv) * hd;  // between keys
  const int hkv = w.hq * p.pack / (p.heads_q / p.heads_kv);
  const T* k_head = k + (int64_t(w.b) * p.seqlen_k * p.heads_kv + hkv) * hd;
  const T* v_head = v + (int64_t(w.b) * p.seqlen_k * p.heads_kv + hkv) * hd;

  const uint32_t q_smem = SharedAddress(smem);
  const uint32_t ring = q_smem + C::kQBytes + warp * C::kWarpBytes;
  auto load_chunk = [&](int i) {
    const uint32_t stage = ring + (i % C::kStages) * C::kStageBytes;
    const int key0 = (first_chunk + kBlockWarps * i) * kDecodeKeys;
    const int64_t first = int64_t(key0) * kv_stride;
    const int valid = p.seqlen_k - key0;
    LoadChunkRows<T, D>(stage, k_head + first, kv_stride, valid, hd / 8, lane);
    LoadChunkRows<T, D>(stage + C::kChunkBytes, v_head + first, kv_stride,
                        valid, hd / 8, lane);
  };

  LoadDecodeQ<T, D, kRows>(q_smem, q, p, w, hd);
  CpAsyncCommit();
#pragma unroll
  for (int s = 0; s < C::kStages - 1; ++s) {
    if (s < chunks) load_chunk(s);
    CpAsyncCommit();
  }
  CpAsyncWait<C::kStages - 1>();  // Q has landed
  __syncthreads();

  const LaneOffsets<D> a_off = RowMajorOffsets<D>(lane);
  const LaneOffsets<D> k_off = KeyOffsets<D>(lane);
  // Row tile t: the block's rows 16 t .. 16 t + 15 (Q at q_smem + t *
  // kTileQBytes).
  constexpr int kTileQBytes = kDecodeRows * C::kRowBytes;
  static_assert(KD == D || (KD == D / 4 * 3 && D >= 128), "narrow: 3/4 of D = 128 or 256");
  uint32_t q_frag[R][Config<D>::kQInRegisters ? KD / 16 : 1][4];
#pragma unroll
  for (int t = 0; t < R; ++t)
    LoadQFragments<D, KD>(q_frag[t], q_smem + t * kTileQBytes, a_off);

  WarpState<D> st[R];
#pragma unroll
  for (int t = 0; t < R; ++t) st[t].Clear();

  // Keys of the block's first row: [0, mask_from); chunks reaching past it
  // are masked per row.
  const int mask_from = KeyLimit(p, w.q0 / p.pack);
  int limit0[R], limit1[R];
#pragma unroll
  for (int t = 0; t < R; ++t) {
    limit0[t] = KeyLimit(p, (w.q0 + kDecodeRows * t + lane / 4) / p.pack);
    limit1[t] = KeyLimit(p, (w.q0 + kDecodeRows * t + lane / 4 + 8) / p.pack);
  }

  for (int i = 0; i < chunks; ++i) {
    CpAsyncWait<C::kStages - 2>();  // chunk i has landed
    // ... for the whole warp; chunk i - 1 is read.
    __syncwarp();
    if (i + C::kStages - 1 < chunks) load_chunk(i + C::kStages - 1);
    CpAsyncCommit();
    const int key0 = (first_chunk + kBlockWarps * i) * kDecodeKeys;
    const uint32_t k_tile = ring + (i % C::kStages) * C::kStageBytes;
#pragma unroll
    for (int t = 0; t < R; ++t) {
      float s[kDecodeKeys / 8][4];
      ComputeScores<T, D, kDecodeKeys, KD>(q_frag[t], q_smem + t * kTileQBytes, k_tile,
                                           a_off, k_off, s);
      if (key0 + kDecodeKeys > mask_from)
        MaskScores<kDecodeKeys>(s, key0, lane, limit0[t], limit1[t]);
      UpdateSoftmax<D, kDecodeKeys, KD>(s, st[t], p.scale_log2);
      AccumulatePV<T, D, kDecodeKeys, KD>(s, k_tile + C::kChunkBytes, a_off, st[t].acc);
    }
  }

  // Merge: each warp's unnormalised O, maxima and sums into shared memory
  // (over its ring, once every warp is done with it) ...
  float total[R][2];
#pragma unroll
  for (int t = 0; t < R; ++t)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      total[t][i] = st[t].row_sum[i];
      total[t][i] += __shfl_xor_sync(0xffffffffu, total[t][i], 1);
      total[t][i] += __shfl_xor_sync(0xffffffffu, total[t][i], 2);
    }
  CpAsyncWait<0>();
  __syncthreads();
  // (Entry warp x kRows + row.)
  float* const part_o = reinterpret_cast<float*>(smem + C::kQBytes);
  float* const part_max = part_o + kBlockWarps * kRows * D;
  float* const part_sum = part_max + kBlockWarps * kRows;
#pragma unroll
  for (int t = 0; t < R; ++t)
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int r = warp * kRows + kDecodeRows * t + lane / 4 + 8 * i;
#pragma unroll
      for (int n = 0; n < D / 8; ++n)
        *reinterpret_cast<float2*>(part_o + r * D + 8 * n + 2 * (lane % 4)) =
            make_float2(st[t].acc[n][2 * i], st[t].acc[n][2 * i + 1]);
      if (lane % 4 == 0) {
        part_max[r] = st[t].row_max[i];
        part_sum[r] = total[t][i];
      }
    }
  __syncthreads();
  // ... then each thread combines 8 columns of one row per step: row
  // threadIdx.x / kThreadsPerRow (8, or 4 with two row tiles), columns 8
  // (threadIdx.x % kThreadsPerRow + kThreadsPerRow step).
  constexpr int kThreadsPerRow = C::kThreadsPerRow;
  const int r = threadIdx.x / kThreadsPerRow;
  const int m = w.q0 + r;
  if (m >= rows_total) return;  // a row past the group's
  float mx = -INFINITY;
#pragma unroll
  for (int u = 0; u < kBlockWarps; ++u)
    mx = fmaxf(mx, part_max[u * kRows + r]);
  float factor[kBlockWarps];
  float sum = 0.f;
#pragma unroll
  for (int u = 0; u < kBlockWarps; ++u) {
    const float wm = part_max[u * kRows + r];
    factor[u] = wm == -INFINITY ? 0.f : Exp2((wm - mx) * p.scale_log2);
    sum += part_sum[u * kRows + r] * factor[u];
  }
  const float inv = RowInverse<D>(sum);
  const PackedRow at = RowAt(p, w.hq, m);
  const int64_t row_index =
      (int64_t(w.b) * p.heads_q + at.head) * p.seqlen_q + at.query;
  const int64_t all_rows = int64_t(p.batch) * p.heads_q * p.seqlen_q;
#pragma unroll
  for (int step = 0; step < D / (8 * kThreadsPerRow); ++step) {
    const int col = 8 * (threadIdx.x % kThreadsPerRow + kThreadsPerRow * step);
    float x[8];
#pragma unroll
    for (int c = 0; c < 8; ++c) x[c] = 0.f;
#pragma unroll
    for (int u = 0; u < kBlockWarps; ++u) {
      const float* src = part_o + (u * kRows + r) * D + col;
#pragma unroll
      for (int c = 0; c < 8; c += 2) {
        const float2 y = *reinterpret_cast<const float2*>(src + c);
        x[c] += factor[u] * y.x;
        x[c + 1] += factor[u] * y.y;
      }
    }
#pragma unroll
    for (int c = 0; c < 8; ++c) x[c] *= inv;
    if (p.splits == 1) {
      if (col < hd) {  // not a padding column
        T* out = o + ((int64_t(w.b) * p.seqlen_q + at.query) * p.heads_q +
                      at.head) * hd + col;
        *reinterpret_cast<uint4*>(out) =
            make_uint4(Pack2(x[0], x[1], T()), Pack2(x[2], x[3], T()),
                       Pack2(x[4], x[5], T()), Pack2(x[6], x[7], T()));
      }
    } else {
      float* out = scratch.split_o + (blockIdx.y * all_rows + row_index) * D + col;
#pragma unroll
      for (int c = 0; c < 8; c += 2)
        *reinterpret_cast<float2*>(out + c) = make_float2(x[c], x[c + 1]);
    }
  }
  if (threadIdx.x % kThreadsPerRow == 0) {
    const float row_lse = RowLse<D>(mx, sum, p.scale_log2);
    if (p.splits == 1)
      lse[row_index] = row_lse;
    else
      scratch.split_lse[blockIdx.y * all_rows + row_index] = row_lse;
  }
}

#if KSEEK_FA_TRACE
// The item trace (KSEEK_FA_TRACE): per block and round one record of the
// first consumer's thread 0 and one of the producer, kTraceWords words
// each: [0] the item (bits 0-31), its key tiles (32-47), the SM (48-55),
// the kind (56-63: 1 consumer, 2 producer); [1] and [2] the global timer
// (ns) at the round's start and end; from [3] the SM's clock at the
// round's points (consumer [3..8]: start, Q landed, first K landed, first
// S done, last P V done, O stored; producer [3..7]: start, item located,
// Q issued (after its buffer's wait), first K issued, last V issued);
// [9] the head (bits 0-31) and the batch (32-63). Rounds past kTraceRounds and
// blocks past kTraceBlocks are not recorded; a record is written by one
// thread with plain stores, no atomics, so that stamping costs the
// round a few stores.
constexpr int kTraceBlocks = 264;
constexpr int kTraceRounds = 128;
constexpr int kTraceWords = 10;
__device__ unsigned long long g_trace[kTraceBlocks * kTraceRounds * 2 * kTraceWords];

// Code that only the trace build has (the default build compiles none of it).
#define KSEEK_FA_TRACE_ONLY(...) __VA_ARGS__
#else
#define KSEEK_FA_TRACE_ONLY(...)
#endif

// ---------------------------------------------------------------------------
// PTX wrappers of the WGMMA kernel: WGMMA, TMA, mbarriers, register
// reallocation. sm_90a only (the kernel is empty for other targets).

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// Shared-memory matrix descriptor of a 128-byte-swizzled operand: start
// address, leading and stride byte offsets (hopper_wgmma_probe.cu checks
// these conventions on the device).
__device__ __forceinline__ uint64_t Descriptor(uint32_t smem_addr,
                                               uint32_t lbo_bytes,
                                               uint32_t sbo_bytes) {
  constexpr uint64_t kSwizzle128B = 1;
  return uint64_t((smem_addr & 0x3FFFF) >> 4) |
         (uint64_t((lbo_bytes >> 4) & 0x3FFF) << 16) |
         (uint64_t((sbo_bytes >> 4) & 0x3FFF) << 32) | (kSwizzle128B << 62);
}

__device__ __forceinline__ void WgmmaFence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}
__device__ __forceinline__ void WgmmaCommit() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}
// Waits until at most kPending committed groups are still running.
template <int kPending>
__device__ __forceinline__ void WgmmaWait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending)
               : "memory");
}

// A shared-memory store of x to `addr` that runs only where x < 0, which
// the softmax's row sums never are (NaN compares false): nothing is
// written, but ptxas keeps the instructions that compute x before the
// store, and the store before a later wgmma wait (KSEEK_FA_PIN_PV_WAIT).
[[maybe_unused]] __device__ __forceinline__ void StoreIfNegative(uint32_t addr, float x) {
  asm volatile(
      "{\n.reg .pred neg;\nsetp.lt.f32 neg, %1, 0f00000000;\n@neg st.shared.f32 [%0], %1;\n}\n" ::"r"(
          addr),
      "f"(x)
      : "memory");
}

// Keeps registers an asynchronous wgmma reads or writes in place until
// this point: the compiler may neither reuse nor move them earlier.
template <int G>
__device__ __forceinline__ void HoldRegisters(float (&r)[G][4]) {
#pragma unroll
  for (int i = 0; i < G; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+f"(r[i][e])::"memory");
}
template <int G>
__device__ __forceinline__ void HoldRegisters(uint32_t (&r)[G][4]) {
#pragma unroll
  for (int i = 0; i < G; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) asm volatile("" : "+r"(r[i][e])::"memory");
}

// Accumulator operands: groups i .. i + 1 (8 registers) of d[][4], and
// the register lists of 32 and 64 accumulators.
#define KSEEK_ACC8(d, i)                                                    \
  "+f"(d[i][0]), "+f"(d[i][1]), "+f"(d[i][2]), "+f"(d[i][3]),               \
      "+f"(d[(i) + 1][0]), "+f"(d[(i) + 1][1]), "+f"(d[(i) + 1][2]),        \
      "+f"(d[(i) + 1][3])
#define KSEEK_ACC32(d, i)                                                   \
  KSEEK_ACC8(d, i), KSEEK_ACC8(d, (i) + 2), KSEEK_ACC8(d, (i) + 4),         \
      KSEEK_ACC8(d, (i) + 6)
#define KSEEK_ACC64(d, i) KSEEK_ACC32(d, i), KSEEK_ACC32(d, (i) + 8)
#define KSEEK_ACC40(d, i) KSEEK_ACC32(d, i), KSEEK_ACC8(d, (i) + 8)
#define KSEEK_ACC128(d, i) KSEEK_ACC64(d, i), KSEEK_ACC64(d, (i) + 16)
#define KSEEK_ACC88(d, i)                                                   \
  KSEEK_ACC64(d, i), KSEEK_ACC8(d, (i) + 16), KSEEK_ACC8(d, (i) + 18),      \
      KSEEK_ACC8(d, (i) + 20)
#define KSEEK_ACC96(d, i) KSEEK_ACC64(d, i), KSEEK_ACC32(d, (i) + 16)
#define KSEEK_ACC72(d, i) KSEEK_ACC64(d, i), KSEEK_ACC8(d, (i) + 16)
#define KSEEK_ACC80(d, i) KSEEK_ACC72(d, i), KSEEK_ACC8(d, (i) + 18)
#define KSEEK_ACC48(d, i) KSEEK_ACC40(d, i), KSEEK_ACC8(d, (i) + 10)
#define KSEEK_ACC56(d, i) KSEEK_ACC48(d, i), KSEEK_ACC8(d, (i) + 12)
// Operand lists of the wgmma accumulators, "{%0, ..., %(n-1)}", built from
// shared runs (adjacent string literals concatenate).
#define KSEEK_R0_31                                                    \
  "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, "  \
  "%15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, "  \
  "%28, %29, %30, %31"
#define KSEEK_R32_39 "%32, %33, %34, %35, %36, %37, %38, %39"
#define KSEEK_R40_47 "%40, %41, %42, %43, %44, %45, %46, %47"
#define KSEEK_R48_55 "%48, %49, %50, %51, %52, %53, %54, %55"
#define KSEEK_R40_63 \
  KSEEK_R40_47 ", " KSEEK_R48_55 ", %56, %57, %58, %59, %60, %61, %62, %63"
#define KSEEK_R64_87                                                   \
  "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, "  \
  "%77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87"
#define KSEEK_R88_95 "%88, %89, %90, %91, %92, %93, %94, %95"
#define KSEEK_R64_71 "%64, %65, %66, %67, %68, %69, %70, %71"
#define KSEEK_R72_79 "%72, %73, %74, %75, %76, %77, %78, %79"
#define KSEEK_R96_127                                                   \
  "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, "      \
  "%107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, "  \
  "%118, %119, %120, %121, %122, %123, %124, %125, %126, %127"
#define KSEEK_REGS32 "{" KSEEK_R0_31 "}"
#define KSEEK_REGS40 "{" KSEEK_R0_31 ", " KSEEK_R32_39 "}"
#define KSEEK_REGS48 "{" KSEEK_R0_31 ", " KSEEK_R32_39 ", " KSEEK_R40_47 "}"
#define KSEEK_REGS56 \
  "{" KSEEK_R0_31 ", " KSEEK_R32_39 ", " KSEEK_R40_47 ", " KSEEK_R48_55 "}"
#define KSEEK_REGS64 "{" KSEEK_R0_31 ", " KSEEK_R32_39 ", " KSEEK_R40_63 "}"
#define KSEEK_REGS88 \
  "{" KSEEK_R0_31 ", " KSEEK_R32_39 ", " KSEEK_R40_63 ", " KSEEK_R64_87 "}"
#define KSEEK_REGS72 \
  "{" KSEEK_R0_31 ", " KSEEK_R32_39 ", " KSEEK_R40_63 ", " KSEEK_R64_71 "}"
#define KSEEK_REGS80                                                    \
  "{" KSEEK_R0_31 ", " KSEEK_R32_39 ", " KSEEK_R40_63 ", " KSEEK_R64_71 \
  ", " KSEEK_R72_79 "}"
#define KSEEK_REGS96                                                    \
  "{" KSEEK_R0_31 ", " KSEEK_R32_39 ", " KSEEK_R40_63 ", " KSEEK_R64_87 \
  ", " KSEEK_R88_95 "}"
#define KSEEK_REGS128                                                   \
  "{" KSEEK_R0_31 ", " KSEEK_R32_39 ", " KSEEK_R40_63 ", " KSEEK_R64_87 \
  ", " KSEEK_R88_95 ", " KSEEK_R96_127 "}"

// d (64 x N, fp32) = A B^T (+ d when accumulate != 0); A (64 x 16) and B
// (N x 16) K-major in shared memory. A_, B_ and P_ name the operands
// after the accumulators.
#define KSEEK_WGMMA_SS(TYPE, N, REGS, A_, B_, P_, ...)                      \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " P_ ", 0;\n"             \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "."   \
               TYPE " " REGS ", " A_ ", " B_ ", p, 1, 1, 0, 0;\n}\n"         \
               : __VA_ARGS__                                                \
               : "l"(desc_a), "l"(desc_b), "r"(accumulate))

// d (64 x N, fp32) += A B; A (64 x 16) in registers (the m16n8k16 A
// layout per warp), B (16 x N) MN-major in shared memory (TRANS 1), or
// d = A B^T (+ d when accumulate != 0) with B (N x 16) K-major (TRANS 0:
// S with Q in registers, KSEEK_FA_Q_REGS).
#define KSEEK_WGMMA_RS(TYPE, N, REGS, A_, B_, P_, ...)                      \
  KSEEK_WGMMA_RS_TRANS(TYPE, N, REGS, A_, B_, P_, "1", 1, __VA_ARGS__)
#define KSEEK_WGMMA_RSK(TYPE, N, REGS, A_, B_, P_, ...)                     \
  KSEEK_WGMMA_RS_TRANS(TYPE, N, REGS, A_, B_, P_, "0", accumulate, __VA_ARGS__)
#define KSEEK_WGMMA_RS_TRANS(TYPE, N, REGS, A_, B_, P_, TRANS, ACCUMULATE, ...) \
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, " P_ ", 0;\n"             \
               "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." TYPE "."   \
               TYPE " " REGS ", " A_ ", " B_ ", p, 1, 1, " TRANS ";\n}\n"   \
               : __VA_ARGS__                                                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b),   \
                 "r"(ACCUMULATE))

// The wrappers below for both 16-bit types: the type is a literal in the
// instruction.
#define KSEEK_WGMMA_SS_T(...)                                               \
  if constexpr (kIsHalf<T>)                                                 \
    KSEEK_WGMMA_SS("f16", __VA_ARGS__);                                     \
  else                                                                      \
    KSEEK_WGMMA_SS("bf16", __VA_ARGS__)
#define KSEEK_WGMMA_RS_T(...)                                               \
  if constexpr (kIsHalf<T>)                                                 \
    KSEEK_WGMMA_RS("f16", __VA_ARGS__);                                     \
  else                                                                      \
    KSEEK_WGMMA_RS("bf16", __VA_ARGS__)
#define KSEEK_WGMMA_RSK_T(...)                                              \
  if constexpr (kIsHalf<T>)                                                 \
    KSEEK_WGMMA_RSK("f16", __VA_ARGS__);                                    \
  else                                                                      \
    KSEEK_WGMMA_RSK("bf16", __VA_ARGS__)

// One specialisation per N, since the operand list is a literal:
// WgmmaSS<T, N> (d = A B^T (+ d), as KSEEK_WGMMA_SS), WgmmaRS<T, N,
// kBase> (d groups kBase .. += A B, as KSEEK_WGMMA_RS) and WgmmaRSK<T, N>
// (d = A B^T (+ d), A in registers, as KSEEK_WGMMA_RSK).
template <int N>
struct WgmmaSSOp;
template <int N>
struct WgmmaRSOp;
template <int N>
struct WgmmaRSKOp;
#define KSEEK_DEFINE_WGMMA_SS(N, REGS, A_, B_, P_, ACC)                     \
  template <>                                                               \
  struct WgmmaSSOp<N> {                                                     \
    template <typename T>                                                   \
    __device__ __forceinline__ static void Run(float (&d)[N / 8][4],        \
                                               uint64_t desc_a,             \
                                               uint64_t desc_b,             \
                                               int accumulate) {            \
      KSEEK_WGMMA_SS_T(N, REGS, A_, B_, P_, ACC(d, 0));                     \
    }                                                                       \
  };
// Both register-A forms for N: WgmmaRSOp<N> (P V) and WgmmaRSKOp<N> (S with
// Q in registers), whose operand lists are the same.
#define KSEEK_DEFINE_WGMMA_RS(N, REGS, A_, B_, P_, ACC)                     \
  template <>                                                               \
  struct WgmmaRSOp<N> {                                                     \
    template <typename T, int kBase, int G>                                 \
    __device__ __forceinline__ static void Run(float (&d)[G][4],            \
                                               const uint32_t (&a)[4],      \
                                               uint64_t desc_b) {           \
      static_assert(kBase + N / 8 <= G, "accumulator groups");              \
      KSEEK_WGMMA_RS_T(N, REGS, A_, B_, P_, ACC(d, kBase));                 \
    }                                                                       \
  };                                                                        \
  template <>                                                               \
  struct WgmmaRSKOp<N> {                                                    \
    template <typename T>                                                   \
    __device__ __forceinline__ static void Run(float (&d)[N / 8][4],        \
                                               const uint32_t (&a)[4],      \
                                               uint64_t desc_b,             \
                                               int accumulate) {            \
      KSEEK_WGMMA_RSK_T(N, REGS, A_, B_, P_, ACC(d, 0));                    \
    }                                                                       \
  };
KSEEK_DEFINE_WGMMA_SS(64, KSEEK_REGS32, "%32", "%33", "%34", KSEEK_ACC32)
KSEEK_DEFINE_WGMMA_SS(80, KSEEK_REGS40, "%40", "%41", "%42", KSEEK_ACC40)
KSEEK_DEFINE_WGMMA_SS(96, KSEEK_REGS48, "%48", "%49", "%50", KSEEK_ACC48)
KSEEK_DEFINE_WGMMA_SS(112, KSEEK_REGS56, "%56", "%57", "%58", KSEEK_ACC56)
KSEEK_DEFINE_WGMMA_SS(128, KSEEK_REGS64, "%64", "%65", "%66", KSEEK_ACC64)
KSEEK_DEFINE_WGMMA_SS(144, KSEEK_REGS72, "%72", "%73", "%74", KSEEK_ACC72)
KSEEK_DEFINE_WGMMA_SS(160, KSEEK_REGS80, "%80", "%81", "%82", KSEEK_ACC80)
KSEEK_DEFINE_WGMMA_SS(176, KSEEK_REGS88, "%88", "%89", "%90", KSEEK_ACC88)
KSEEK_DEFINE_WGMMA_SS(192, KSEEK_REGS96, "%96", "%97", "%98", KSEEK_ACC96)
KSEEK_DEFINE_WGMMA_RS(64, KSEEK_REGS32, "{%32, %33, %34, %35}", "%36", "%37",
                      KSEEK_ACC32)
KSEEK_DEFINE_WGMMA_RS(80, KSEEK_REGS40, "{%40, %41, %42, %43}", "%44", "%45",
                      KSEEK_ACC40)
KSEEK_DEFINE_WGMMA_RS(128, KSEEK_REGS64, "{%64, %65, %66, %67}", "%68", "%69",
                      KSEEK_ACC64)
KSEEK_DEFINE_WGMMA_RS(160, KSEEK_REGS80, "{%80, %81, %82, %83}", "%84", "%85",
                      KSEEK_ACC80)
KSEEK_DEFINE_WGMMA_RS(192, KSEEK_REGS96, "{%96, %97, %98, %99}", "%100", "%101",
                      KSEEK_ACC96)
KSEEK_DEFINE_WGMMA_RS(256, KSEEK_REGS128, "{%128, %129, %130, %131}", "%132",
                      "%133", KSEEK_ACC128)

template <typename T, int N>
__device__ __forceinline__ void WgmmaSS(float (&d)[N / 8][4], uint64_t desc_a,
                                        uint64_t desc_b, int accumulate) {
  WgmmaSSOp<N>::template Run<T>(d, desc_a, desc_b, accumulate);
}
template <typename T, int N, int kBase, int G>
__device__ __forceinline__ void WgmmaRS(float (&d)[G][4],
                                        const uint32_t (&a)[4],
                                        uint64_t desc_b) {
  WgmmaRSOp<N>::template Run<T, kBase, G>(d, a, desc_b);
}
template <typename T, int N>
__device__ __forceinline__ void WgmmaRSK(float (&d)[N / 8][4], const uint32_t (&a)[4],
                                         uint64_t desc_b, int accumulate) {
  WgmmaRSKOp<N>::template Run<T>(d, a, desc_b, accumulate);
}

#undef KSEEK_DEFINE_WGMMA_RS
#undef KSEEK_DEFINE_WGMMA_SS
#undef KSEEK_WGMMA_RSK_T
#undef KSEEK_WGMMA_RS_T
#undef KSEEK_WGMMA_SS_T
#undef KSEEK_WGMMA_RS_TRANS
#undef KSEEK_WGMMA_RSK
#undef KSEEK_WGMMA_RS
#undef KSEEK_WGMMA_SS
#undef KSEEK_REGS128
#undef KSEEK_REGS96
#undef KSEEK_REGS88
#undef KSEEK_REGS64
#undef KSEEK_REGS56
#undef KSEEK_REGS48
#undef KSEEK_REGS40
#undef KSEEK_REGS32
#undef KSEEK_R96_127
#undef KSEEK_R88_95
#undef KSEEK_R64_87
#undef KSEEK_R40_63
#undef KSEEK_R48_55
#undef KSEEK_R40_47
#undef KSEEK_R32_39
#undef KSEEK_R0_31
#undef KSEEK_ACC128
#undef KSEEK_ACC96
#undef KSEEK_ACC88
#undef KSEEK_ACC64
#undef KSEEK_ACC56
#undef KSEEK_ACC48
#undef KSEEK_ACC40
#undef KSEEK_ACC32
#undef KSEEK_ACC8

__device__ __forceinline__ void BarrierInit(uint32_t bar, int count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar),
               "r"(count)
               : "memory");
}
// Makes the initialised barriers visible to the async proxy (TMA).
__device__ __forceinline__ void FenceBarrierInit() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
// One arrival that also announces `bytes` of TMA transactions.
__device__ __forceinline__ void ArriveExpectBytes(uint32_t bar,
                                                  uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
               ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void Arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar)
               : "memory");
}
// One arrival where `pred` holds, as a predicated instruction (no branch).
__device__ __forceinline__ void ArriveIf(uint32_t bar, bool pred) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %1, 0;\n"
      "@p mbarrier.arrive.shared::cta.b64 _, [%0];\n}\n" ::"r"(bar),
      "r"(int(pred))
      : "memory");
}
// Waits until the barrier's phase with parity `parity` has completed.
// kAcquireCluster: also acquires at cluster scope what the arrivals
// released (another block's stores into this block's shared memory,
// ArriveReleaseCluster's), each try without the suspend-time hint.
template <bool kAcquireCluster = false>
__device__ __forceinline__ void Wait(uint32_t bar, uint32_t parity) {
  uint32_t done = 0;
  while (!done) {
    if constexpr (kAcquireCluster) {
      asm volatile(
          "{\n.reg .pred p;\n"
          "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
          "selp.u32 %0, 1, 0, p;\n}\n"
          : "=r"(done)
          : "r"(bar), "r"(parity)
          : "memory");
    } else {
#if KSEEK_FA_WAIT_HINT_NS > 0
      // Each try may suspend the thread until the phase completes, for at
      // most the hint: few tries, where the default limit makes a spin.
      asm volatile(
          "{\n.reg .pred p;\n"
          "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n"
          "selp.u32 %0, 1, 0, p;\n}\n"
          : "=r"(done)
          : "r"(bar), "r"(parity), "n"(KSEEK_FA_WAIT_HINT_NS)
          : "memory");
#else
      asm volatile(
          "{\n.reg .pred p;\n"
          "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
          "selp.u32 %0, 1, 0, p;\n}\n"
          : "=r"(done)
          : "r"(bar), "r"(parity)
          : "memory");
#endif
    }
  }
}

// Whether the barrier's phase with parity `parity` has completed, without
// waiting.
__device__ __forceinline__ bool TestWait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\n"
      "mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// The L2 cache policy of TmaLoad4d's kHint 2 (evict last).
template <int kHint>
__device__ __forceinline__ uint64_t L2EvictPolicy() {
  static_assert(kHint == 2, "L2 eviction hints: 2 (evict last)");
  uint64_t policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}

// One box of a 4-D tensor map (coordinates innermost first) into shared
// memory; completion is counted in bytes on `bar`.
// kHint: the load's L2 eviction priority, 0 the default (no hint), 2
// evict last (K/V, read by every query tile of the head); the policy is
// made at each load (the producer has 24 registers).
template <int kHint = 0>
__device__ __forceinline__ void TmaLoad4d(uint32_t dst, const CUtensorMap* map,
                                          uint32_t bar, int c0, int c1, int c2,
                                          int c3) {
  if constexpr (kHint == 0) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::"
        "bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
        "r"(bar)
        : "memory");
  } else {
    const uint64_t policy = L2EvictPolicy<kHint>();
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::"
        "bytes.L2::cache_hint [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
        "r"(bar), "l"(policy)
        : "memory");
  }
}

#if KSEEK_FA_TRACE
// The item trace's clock, global timer (ns) and SM (KSEEK_FA_TRACE).
__device__ __forceinline__ unsigned long long TraceClock() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%clock64;\n" : "=l"(t)::"memory");
  return t;
}
__device__ __forceinline__ unsigned long long TraceTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t)::"memory");
  return t;
}
__device__ __forceinline__ unsigned TraceSm() {
  unsigned s;
  asm volatile("mov.u32 %0, %%smid;\n" : "=r"(s));
  return s;
}
#endif

template <int kRegs>
__device__ __forceinline__ void RaiseRegisters() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void LowerRegisters() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// Named barrier `id` (not 0, which __syncthreads uses) of `threads`
// threads: wait for all of them, or only count this warp in.
__device__ __forceinline__ void NamedBarrier(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void NamedBarrierArrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Four 8 x 8 matrices of 16-bit elements from the warp's registers into
// shared memory: register i of lane l holds row l / 4, columns 2 (l % 4)
// and 2 (l % 4) + 1 of matrix i (the mma accumulator layout); lane l gives
// the address of row l % 8 of matrix l / 8 (16 bytes).
__device__ __forceinline__ void StMatrixX4(uint32_t addr, uint32_t r0,
                                           uint32_t r1, uint32_t r2,
                                           uint32_t r3) {
  asm volatile(
      "stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
      "r"(r0), "r"(r1), "r"(r2), "r"(r3)
      : "memory");
}
// TMA stores (KSEEK_FA_TMA_STORES): one box of shared memory (1024-byte
// aligned, 128-byte swizzled) into a 4-D tensor map, coordinates
// innermost first; elements past the tensor's bounds are not written.
// Each is its own bulk async-group of the issuing thread.
__device__ __forceinline__ void TmaStore4d(const CUtensorMap* map,
                                           uint32_t src, int c0, int c1,
                                           int c2, int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.global.shared::cta.bulk_group [%0, {%2, %3, %4, "
      "%5}], [%1];\n" ::"l"(reinterpret_cast<uint64_t>(map)),
      "r"(src), "r"(c0), "r"(c1), "r"(c2), "r"(c3)
      : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// The thread's bulk groups but the newest kPending have read their
// shared memory (it may be written again).
template <int kPending>
__device__ __forceinline__ void BulkWaitRead() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(kPending) : "memory");
}
// The thread's bulk groups but the newest kPending are complete.
template <int kPending>
__device__ __forceinline__ void BulkWait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(kPending) : "memory");
}
// This thread's shared-memory writes, visible to the async proxy (TMA).
__device__ __forceinline__ void FenceProxyAsync() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Clusters of two blocks (KSEEK_FA_CLUSTER). The block's rank in its
// cluster.
__device__ __forceinline__ uint32_t ClusterRank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// Every thread of every block of the cluster: the writes before it (the
// barriers' initialisation) visible to all of them after it.
__device__ __forceinline__ void ClusterSync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}
// The shared::cluster address of this block's shared address `local` in
// the block of rank `rank` of the cluster.
__device__ __forceinline__ uint32_t PeerAddress(uint32_t local, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(local), "r"(rank));
  return r;
}
// One arrival where `pred` holds on the barrier at shared::cluster address
// `bar` (PeerAddress: another block's). The consumers' reads it releases
// are complete (their wgmma groups waited for); with .release.cluster
// ptxas puts MEMBAR.ALL.GPU and two error barriers before each arrival,
// which made the clusters 0.70x the default (NOTES.md v3o).
__device__ __forceinline__ void ArriveClusterIf(uint32_t bar, bool pred) {
  asm volatile(
      "{\n.reg .pred p;\n"
      "setp.ne.b32 p, %1, 0;\n"
      "@p mbarrier.arrive.shared::cluster.b64 _, [%0];\n}\n" ::"r"(bar),
      "r"(int(pred))
      : "memory");
}
#if KSEEK_FA_CAUSAL_CLUSTER && KSEEK_FA_CAUSAL_CLUSTER_QUEUE
// A 32-bit store to shared::cluster address `addr` (PeerAddress: another
// block's shared memory); KSEEK_FA_CAUSAL_CLUSTER_QUEUE's slots.
__device__ __forceinline__ void StoreClusterInt(uint32_t addr, int v) {
  asm volatile("st.shared::cluster.u32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
// One arrival on the barrier at shared::cluster address `bar` that
// releases this thread's earlier writes (StoreClusterInt's) at cluster
// scope, for a Wait<true> on that barrier.
__device__ __forceinline__ void ArriveReleaseCluster(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(bar)
               : "memory");
}
#endif
// TmaLoad4d into every block of the cluster that `mask` names (bit r: rank
// r), at shared address `dst` of each, its bytes counted on each block's
// barrier at `bar`.
template <int kHint = 0>
__device__ __forceinline__ void TmaLoad4dMulticast(uint32_t dst, const CUtensorMap* map,
                                                   uint32_t bar, uint16_t mask, int c0,
                                                   int c1, int c2, int c3) {
  if constexpr (kHint == 0) {
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::"
        "bytes.multicast::cluster [%0], [%1, {%2, %3, %4, %5}], [%6], %7;\n" ::"r"(dst),
        "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3),
        "r"(bar), "h"(mask)
        : "memory");
  } else {
    const uint64_t policy = L2EvictPolicy<kHint>();
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::"
        "bytes.multicast::cluster.L2::cache_hint [%0], [%1, {%2, %3, %4, %5}], [%6], %7, %8;\n"
        ::"r"(dst), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2),
        "r"(c3), "r"(bar), "h"(mask), "l"(policy)
        : "memory");
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

#if KSEEK_FA_TRACE && defined(__CUDA_ARCH_FEAT_SM90_ALL)
// The item trace's records (KSEEK_FA_TRACE) from the clock, the timer and
// the SM above (the emulation brings its own three).
// Round n's record of kind 1 (consumer) or 2 (producer) for this block, or
// null where it is not recorded.
__device__ __forceinline__ unsigned long long* TraceRecord(int n, int kind) {
  if (blockIdx.x >= kTraceBlocks || n >= kTraceRounds) return nullptr;
  return g_trace + ((size_t(blockIdx.x) * kTraceRounds + n) * 2 + (kind - 1)) * kTraceWords;
}
// The stamps. Each finds its record again from the round, so that no
// pointer stays live through the round (the producer has 24 registers).
// The round's start: the global timer and the clock.
__device__ __forceinline__ void TraceStart(int n, int kind) {
  if (unsigned long long* const rec = TraceRecord(n, kind)) {
    rec[1] = TraceTimer();
    rec[3] = TraceClock();
  }
}
// The clock at one of the round's points (word 4 on).
__device__ __forceinline__ void TraceAt(int n, int kind, int word) {
  if (unsigned long long* const rec = TraceRecord(n, kind)) rec[word] = TraceClock();
}
// The round's end: the clock at `word`, then the global timer.
__device__ __forceinline__ void TraceEnd(int n, int kind, int word) {
  if (unsigned long long* const rec = TraceRecord(n, kind)) {
    rec[word] = TraceClock();
    rec[2] = TraceTimer();
  }
}
// The record's first and last words: the item's query row, key tiles, SM
// and kind; its head and batch.
__device__ __forceinline__ void TraceItem(int n, int kind, int q0, int tiles, int hq, int b) {
  if (unsigned long long* const rec = TraceRecord(n, kind)) {
    rec[0] = (unsigned long long)(unsigned)q0 | (unsigned long long)(tiles & 0xffff) << 32 |
             (unsigned long long)(TraceSm() & 0xff) << 48 | (unsigned long long)kind << 56;
    rec[9] = (unsigned long long)(unsigned)hq | (unsigned long long)(unsigned)b << 32;
  }
}
#endif

// ---------------------------------------------------------------------------
// The WGMMA kernel: configuration.

constexpr int kWgThreads = 128;  // one warpgroup
constexpr int kWgRows = 64;      // query rows per consumer: one m64 tile
constexpr int kColBlockRowBytes = 128;  // 64 columns of one row
constexpr int kTurnBarrier = 3;  // + consumer: its turn to issue GEMMs
constexpr int kStagedOBarrier = 7;  // both consumers done with the last V (KSEEK_FA_TMA_IN_V)

// kConsumers: consumer warpgroups (64 query rows each); three only at
// head_dim 64, where the softmax's exponentials weigh most against the
// GEMMs (Launch picks by shape), with fewer registers each after setmaxnreg.
template <int D, int NC = 2, int BN = 0, int QB = 0>
struct WgmmaConfig {
  static constexpr int kConsumers = NC;
  static_assert(NC == 2 || (NC == 3 && D == 64), "2, or 3 at head_dim 64");
  static constexpr int kConsumerRegisters = kConsumers == 3 ? 160 : 240;
  static constexpr int kThreads = kWgThreads * (1 + kConsumers);
  // Registers per thread at launch (__launch_bounds__(kThreads, 1): the
  // register file over the threads, in steps of 8). setmaxnreg moves
  // registers between the block's warpgroups only: .inc waits until .dec
  // has returned enough to the block's pool, so the counts after it must
  // fit the launch allocation, or the consumers wait forever.
  static constexpr int kLaunchRegisters = 65536 / kThreads / 8 * 8;
  // The producer's count: 24 (one thread issuing TMA loads); the part-by-
  // part Q loads of KSEEK_FA_Q_PER_CONSUMER take what the consumers leave
  // (32 with three consumers, still 24 with two).
  static constexpr bool kQPerConsumer =
      (KSEEK_FA_Q_PER_CONSUMER & HeadDimBit(D)) != 0;
  static constexpr int kProducerRegisters =
      kQPerConsumer
          ? kLaunchRegisters * (1 + kConsumers) - kConsumerRegisters * kConsumers
          : 24;
  static_assert(kProducerRegisters >= 24 && kProducerRegisters % 8 == 0 &&
                    kConsumerRegisters * kConsumers + kProducerRegisters <=
                        kLaunchRegisters * (1 + kConsumers),
                "the warpgroups' counts after setmaxnreg fit the registers "
                "the block has at launch");
  static constexpr int kBlockM = kWgRows * kConsumers;  // rows per item
  static constexpr int kBlockN =  // keys per tile (BN, when given)
      BN > 0 ? BN
      : D == 256 ? KSEEK_FA_HD256_BLOCK_N
      : D == 192 ? KSEEK_FA_HD192_BLOCK_N
                 : 128;
  static_assert(kBlockN == 64 || kBlockN == 80 || kBlockN == 128 ||
                    kBlockN == 144 || kBlockN == 160 ||
                    kBlockN == 176 || kBlockN == 192 ||
                    (D == 192 && (kBlockN == 96 || kBlockN == 112)),
                "S = Q K^T is m64n64, m64n80, m64n128, m64n144, m64n160, m64n176 or m64n192 "
                "(at D = 192 also m64n96 and m64n112)");
  static_assert(kBlockN <= 128 || (D == 128 && NC == 2),
                "wide key tiles only at head_dim 128");
  // Q buffers: with two, the next item's Q (and so its first K/V tiles)
  // loads while the consumers still compute this item; head_dim 256 has
  // no room for a second one, head_dim 128 gives up a K/V stage for it.
  // Short key tiles (80 keys, for sequences that fit one) leave room for
  // both at head_dim 128; at 192 80-key tiles leave room for two Q
  // buffers and two stages (216 KB), 96- and 112-key tiles for one Q
  // buffer. QB, when given, sets it.
  static constexpr int kQBuffers = QB > 0                      ? QB
                                   : D == 64                   ? KSEEK_FA_HD64_Q_BUFFERS
                                   : D == 192                  ? (KSEEK_FA_HD192_Q_BUFFERS > 0
                                                                      ? KSEEK_FA_HD192_Q_BUFFERS
                                                                  : kBlockN <= 80 ? 2 : 1)
                                   : D == 256 || kBlockN > 128 ? 1
                                   : kBlockN < 128             ? 2
                                               : KSEEK_FA_HD128_Q_BUFFERS;
  static_assert(kQBuffers == 1 || kQBuffers == 2, "one or two Q buffers");
  static constexpr int kStages =
      D == 64 ? 4
      : D == 128 && kBlockN == 128 && kQBuffers == 1 ? KSEEK_FA_HD128_STAGES
      : D == 128 && kBlockN < 128                    ? 3
                                                     : 2;
  static constexpr int kColBlocks = D / 64;
  static constexpr int kQHalfBytes = kColBlocks * kWgRows * kColBlockRowBytes;
  static constexpr int kQBytes = kConsumers * kQHalfBytes;
  static constexpr int kTileBytes = kColBlocks * kBlockN * kColBlockRowBytes;
  static constexpr int kStageBytes = 2 * kTileBytes;
  static constexpr int kBarriersAt = kQBuffers * kQBytes + kStages * kStageBytes;
  // Parts of a Q buffer with barriers of their own: 1, or with
  // KSEEK_FA_Q_PER_CONSUMER one per consumer (its 64 rows are reloaded as
  // soon as that consumer's last S of the item is done).
  static constexpr int kQParts = kQPerConsumer ? kConsumers : 1;
  // O in 16-byte stores (KSEEK_FA_WIDE_STORES) at these head dims, not with
  // 64-key tiles (sequences of at most 64 keys: measured 6-13% slower
  // there, faster with 80-key tiles).
  static constexpr bool kWideStores =
      (KSEEK_FA_WIDE_STORES & HeadDimBit(D)) != 0 &&
      kBlockN != 64;
  // Per Q buffer and part Q full, then Q empty, then per stage: K full, V
  // full, K empty, V empty.
  static constexpr int kBarrierBytes =
      8 * (2 * kQBuffers * kQParts + 4 * kStages);
  // The items' slots: an int per Q buffer and part, or with
  // KSEEK_FA_PUBLISH_WORK 8 per part of twice as many rounds.
  static constexpr bool kPublishWork = (KSEEK_FA_PUBLISH_WORK & HeadDimBit(D)) != 0;
  static constexpr int kItemAt = kBarriersAt + kBarrierBytes;
  static constexpr int kItemBytes =
      kPublishWork ? 4 * 8 * 2 * kQBuffers * kQParts
      : 4 * kQBuffers * kQParts > 8 ? 4 * kQBuffers * kQParts : 8;
  // O staged through shared memory (KSEEK_FA_STAGED_STORES), where it fits:
  // 16 rows x 64 columns (2 KB) per consumer warp, 128-byte aligned. Or
  // (KSEEK_FA_TMA_STORES, first) the same rows as TMA stores from
  // 1024-byte aligned buffers (the store's swizzle is the address's): one
  // 2 KB buffer per 64-column pass where they fit, else one.
  static constexpr int kItemEnd = kItemAt + kItemBytes;
  static constexpr int kTmaAt = (kItemEnd + 1023) / 1024 * 1024;
  static constexpr int kWarpsO = kConsumers * 4;
  static constexpr bool kTmaFits = 1024 + kTmaAt + kWarpsO * 2048 <= 227 * 1024;
  static constexpr bool kTmaStores =  // (three consumers: spills at 160 registers)
      (KSEEK_FA_TMA_STORES & HeadDimBit(D)) != 0 && D <= 128 && kConsumers == 2 &&
      (kBlockN < 128 || (KSEEK_FA_TMA_LONG_TILES & HeadDimBit(D)) != 0) && kTmaFits;
  static constexpr int kTmaBuffers =
      1024 + kTmaAt + kWarpsO * 2048 * kColBlocks <= 227 * 1024 ? kColBlocks : 1;
  static constexpr int kStagedAt =
      kTmaStores ? kTmaAt : (kItemEnd + 127) / 128 * 128;
  static constexpr int kStagedBytes = kWarpsO * 2048 * (kTmaStores ? kTmaBuffers : 1);
  static constexpr bool kStagedStores =
      !kTmaStores && (KSEEK_FA_STAGED_STORES & HeadDimBit(D)) != 0 && D <= 128 &&
      1024 + kStagedAt + kStagedBytes <= 227 * 1024;
  // KSEEK_FA_CAUSAL_CLUSTER_QUEUE: the mailbox of the cluster's queue
  // (kMail slots: a full and an empty barrier each, then the ints), last,
  // in the instances of KSEEK_FA_CAUSAL_CLUSTER's head dims (used by the
  // cluster ones only).
  static constexpr bool kMailbox =
      KSEEK_FA_CAUSAL_CLUSTER && KSEEK_FA_CAUSAL_CLUSTER_QUEUE &&
      (KSEEK_FA_CAUSAL_CLUSTER & WgmmaDimBit(D)) != 0;
  static constexpr int kMail = 4;
  static constexpr int kMailAt =
      ((kStagedStores || kTmaStores ? kStagedAt + kStagedBytes : kItemEnd) + 7) / 8 * 8;
  static constexpr int kMailBytes = kMailbox ? kMail * (2 * 8 + 4) : 0;
  // 1024 bytes of slack to align the tiles to the swizzle atom.
  static constexpr int kSmemBytes = 1024 + kMailAt + kMailBytes;
  static_assert(kSmemBytes <= 227 * 1024,
                "fits the shared memory one block can have on sm_90");
};

// Whether the WGMMA instance of config C over the first KD of D columns
// stores O by TMA (the kernel's stores and the host's map of O): where C
// has room and the switches say so, and not on the narrow instances
// (head_dim 80/96 on D = 128), which store O without TMA as before v3k
// (v3k's call 1 measured the TMA stores 1.6-2.6% slower there without
// causal masking, flat with it; v3l's call 2, tn0: +1.2% at 80 and 96
// without them). The choice is the kernel's, not WgmmaConfig's: the
// narrow instances still reserve the buffers.
template <typename C, int D, int KD>
constexpr bool kWgmmaTmaStores = C::kTmaStores && KD == D;
// Whether it stores O by TMA from the last tile's V (KSEEK_FA_TMA_IN_V):
// two consumers, their warps' 2 KB buffers in one V tile, two per warp
// where they fit (kTmaInVBuffers), else one.
template <typename C>
constexpr int kTmaInVBuffers = C::kWarpsO * 2 * 2048 <= C::kTileBytes ? 2 : 1;
template <typename C, int D, int KD>
constexpr bool kWgmmaTmaInV = (KSEEK_FA_TMA_IN_V & WgmmaDimBit(D)) != 0 &&
                              !C::kTmaStores && C::kConsumers == 2 &&
                              C::kWarpsO * 2048 <= C::kTileBytes;

// ---------------------------------------------------------------------------
// The WGMMA kernel.

// A K/V ring position r (>= 0): its stage and the parity of its use of
// that stage. KSEEK_FA_RING_UNSIGNED: computed unsigned, so that a power
// of two of stages takes a shift and a mask, not a signed division's
// five instructions.
template <int kStages>
__device__ __forceinline__ int RingStage(int r) {
  if constexpr (KSEEK_FA_RING_UNSIGNED != 0) return int(unsigned(r) % unsigned(kStages));
  return r % kStages;
}
template <int kStages>
__device__ __forceinline__ uint32_t RingPhase(int r) {
  if constexpr (KSEEK_FA_RING_UNSIGNED != 0) return (unsigned(r) / unsigned(kStages)) & 1u;
  return uint32_t((r / kStages) & 1);
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)

// A 128-byte-swizzled operand's descriptor as its low word (start
// address, LBO) and a fixed high word (SBO 1024 bytes, the swizzle mode):
// an operand `offset` bytes further is the low word plus offset / 16, one
// integer add where Descriptor() takes five uniform instructions (shared
// addresses are below 2^18, so the address field never carries over).
struct DescriptorBase {
  uint32_t lo;
  __device__ __forceinline__ DescriptorBase(uint32_t smem_addr, uint32_t lbo_bytes)
      : lo(((smem_addr & 0x3FFFF) >> 4) | (((lbo_bytes >> 4) & 0x3FFF) << 16)) {}
  __device__ __forceinline__ uint64_t At(uint32_t offset) const {
    constexpr uint32_t kHi = (1024 >> 4) | (1u << 30);  // SBO, 128-byte swizzle
    return (uint64_t(kHi) << 32) | (lo + (offset >> 4));
  }
};

// O += P V for one tile of kN keys: P (16-bit, the m16n8k16 A layout per
// warp) from registers, V from the second half of the K/V stage at
// `stage`, MN-major: 64-column blocks kN * 128 bytes apart (LBO), 8-key
// groups 1024 bytes apart (SBO), 16 keys per step.
// O (its first KO of the D columns: KSEEK_FA_NARROW_PV) += P V of a tile.
template <typename T, int D, int kN, int KO = D>
__device__ __forceinline__ void AccumulatePVWgmma(
    float (&acc)[KO / 8][4], const uint32_t (&pk)[kN / 16][4], uint32_t stage) {
  static_assert(KO == D || (D == 256 && KO == 192), "O columns");
  static_assert(KO % 64 == 0, "whole 64-column blocks of V");
  constexpr uint32_t kColBlockBytes = kN * kColBlockRowBytes;
  constexpr uint32_t kV = D / 64 * kColBlockBytes;  // V after K
  constexpr bool kOneWgmma = D == 64 || D == 128 || KSEEK_FA_PV_N256;  // per 16 keys
  if constexpr (KSEEK_FA_DESC_OFFSETS && kOneWgmma) {
    const DescriptorBase v(stage + kV, kColBlockBytes);
#pragma unroll
    for (int kk = 0; kk < kN / 16; ++kk)
      WgmmaRS<T, KO, 0>(acc, pk[kk], v.At(kk * 16 * kColBlockRowBytes));
  } else {
#pragma unroll
    for (int kk = 0; kk < kN / 16; ++kk) {
      const uint32_t v_rows = stage + kV + kk * 16 * kColBlockRowBytes;
      if constexpr (kOneWgmma) {
        WgmmaRS<T, KO, 0>(acc, pk[kk], Descriptor(v_rows, kColBlockBytes, 1024));
      } else {
        WgmmaRS<T, 128, 0>(acc, pk[kk], Descriptor(v_rows, kColBlockBytes, 1024));
        WgmmaRS<T, KO - 128, 16>(acc, pk[kk],
                                 Descriptor(v_rows + 2 * kColBlockBytes,
                                            kColBlockBytes, 1024));
      }
    }
  }
}

// S (64 x kN, fp32) = Q K^T: Q (64 rows of this consumer) and K (the
// first half of the stage) K-major in 128-byte-swizzled shared memory,
// 16 columns per step (32 bytes inside the swizzle atom's row), over the
// first KD of the D columns (the others hold zeros past head_dim).
template <typename T, int D, int kN, int KD = D>
__device__ __forceinline__ void IssueScoresWgmma(float (&sc)[kN / 8][4],
                                                 uint32_t q_rows,
                                                 uint32_t stage) {
  static_assert(KD % 16 == 0 && KD <= D, "S columns");
  constexpr uint32_t kQColBlockBytes = kWgRows * kColBlockRowBytes;
  constexpr uint32_t kKColBlockBytes = kN * kColBlockRowBytes;
  if constexpr (KSEEK_FA_DESC_OFFSETS) {
    const DescriptorBase q(q_rows, 16), k(stage, 16);
#pragma unroll
    for (int kk = 0; kk < KD / 16; ++kk) {
      const uint32_t step = (kk % 4) * 32;
      WgmmaSS<T, kN>(sc, q.At((kk / 4) * kQColBlockBytes + step),
                     k.At((kk / 4) * kKColBlockBytes + step), kk > 0);
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < KD / 16; ++kk) {
      const uint32_t step = (kk % 4) * 32;
      const uint64_t da =
          Descriptor(q_rows + (kk / 4) * kQColBlockBytes + step, 16, 1024);
      const uint64_t db =
          Descriptor(stage + (kk / 4) * kKColBlockBytes + step, 16, 1024);
      WgmmaSS<T, kN>(sc, da, db, kk > 0);
    }
  }
}

// KSEEK_FA_Q_REGS: the warp's 16 rows (16 w .. 16 w + 15 of its consumer's
// 64 at q_rows, w = warp_in_wg) of Q's first KD columns as the A fragments
// of S's KD / 16 steps (the m16n8k16 A layout: r[0] rows 0-7 and r[1]
// rows 8-15 of the step's first 8 columns, r[2] and r[3] of its last 8).
// Q as TMA wrote it: 64-column blocks of 64 rows x 128 bytes, 16-byte chunk
// c of row r at c ^ (r % 8).
template <int KD>
__device__ __forceinline__ void LoadQRegisters(uint32_t (&qf)[KD / 16][4], uint32_t q_rows,
                                               int warp_in_wg, int lane) {
  constexpr uint32_t kQColBlockBytes = kWgRows * kColBlockRowBytes;
  const int m = lane / 8, r8 = lane % 8;  // the matrix this lane's address is a row of
  const uint32_t row = q_rows + (16 * warp_in_wg + 8 * (m & 1) + r8) * kColBlockRowBytes;
#pragma unroll
  for (int kk = 0; kk < KD / 16; ++kk) {
    const int chunk = 2 * (kk % 4) + (m >> 1);
    LdMatrixX4(qf[kk], row + (kk / 4) * kQColBlockBytes + uint32_t((chunk ^ r8) << 4));
  }
}

// S (64 x kN, fp32) = Q K^T with Q from registers (LoadQRegisters) and K
// as in IssueScoresWgmma (KSEEK_FA_Q_REGS).
template <typename T, int kN, int KD>
__device__ __forceinline__ void IssueScoresWgmmaQRegs(float (&sc)[kN / 8][4],
                                                      const uint32_t (&qf)[KD / 16][4],
                                                      uint32_t stage) {
  constexpr uint32_t kKColBlockBytes = kN * kColBlockRowBytes;
  const DescriptorBase k(stage, 16);
#pragma unroll
  for (int kk = 0; kk < KD / 16; ++kk)
    WgmmaRSK<T, kN>(sc, qf[kk], k.At((kk / 4) * kKColBlockBytes + (kk % 4) * 32), kk > 0);
}

// S of the warp's 16 rows (16 w .. 16 w + 15 of its consumer's 64) again,
// by mma.sync (KSEEK_FA_SUM_CHECK's slow path, taken by one warp where a
// wgmma needs its whole warpgroup): K as IssueScoresWgmma reads it, Q from
// the A fragments in registers (kFromRegs: LoadQRegisters' qf) or from
// shared memory as LoadQRegisters reads it. The m16n8k16 accumulators are
// laid out as the warp's part of the wgmma's; the ldmatrix x4 of K gives
// two 8-key blocks' B fragments (keys as rows, 8 columns per matrix).
// kKGlobal (KSEEK_FA_SC_K_GLOBAL): K's B fragments by plain loads from
// `kg` (the tile's first key, column 0; keys kg_stride elements apart;
// columns from kg_cols on read as 0) instead of the stage.
template <typename T, int kN, int KD, bool kFromRegs, bool kKGlobal = false, int NQ>
__device__ __forceinline__ void ScoresByMma(float (&sc)[kN / 8][4],
                                            const uint32_t (&qf)[NQ][4],
                                            uint32_t q_rows, uint32_t stage,
                                            int warp_in_wg, int lane,
                                            const T* kg = nullptr, int kg_stride = 0,
                                            int kg_cols = 0) {
  static_assert(kN % 16 == 0 && KD % 16 == 0, "whole m16n8k16 steps");
  static_assert(!kFromRegs || NQ == KD / 16, "Q's fragments");
  constexpr uint32_t kKColBlockBytes = kN * kColBlockRowBytes;
  constexpr uint32_t kQColBlockBytes = kWgRows * kColBlockRowBytes;
  const int m = lane / 8, r8 = lane % 8;
  const uint32_t q_row = q_rows + (16 * warp_in_wg + 8 * (m & 1) + r8) * kColBlockRowBytes;
  const uint32_t k_row = stage + (8 * (m >> 1) + r8) * kColBlockRowBytes;
  // Q's A fragment of 16-column step kk.
  auto q_fragment = [&](int kk, uint32_t (&a)[4]) {
    if constexpr (kFromRegs) {
#pragma unroll
      for (int e = 0; e < 4; ++e) a[e] = qf[kk % NQ][e];
    } else {
      const int chunk = 2 * (kk % 4) + (m >> 1);
      LdMatrixX4(a, q_row + (kk / 4) * kQColBlockBytes + uint32_t((chunk ^ r8) << 4));
    }
  };
#pragma unroll
  for (int n = 0; n < kN / 8; ++n)
#pragma unroll
    for (int e = 0; e < 4; ++e) sc[n][e] = 0.f;
  if constexpr (kKGlobal) {
    // Key block by key block: lane l holds key l / 4 of the block, columns
    // 2 (l % 4) + {0, 1} and 8 past them of each 16-column step; this path
    // runs only where a sum was inf or NaN.
    const T* row = kg + int64_t(lane / 4) * kg_stride;
    // One block per pass of a rolled loop, so the tile's blocks cost one
    // block's code (unrolled, with each block's loads waiting for the
    // block before, v4k made the key-tile loops 1.7-1.9x longer and lost
    // 3-8% on short items, NOTES.md v4k). Each pass moves the blocks
    // before down by one and puts its own last, so that sc keeps constant
    // indices (registers) and block 0 ends where it belongs. (Moved into
    // place by selects on the pass's index instead, ptxas spilled 40
    // bytes in the 160-key tail instance's loops.)
#pragma unroll 1
    for (int n = 0; n < kN / 8; ++n) {
      float acc[4] = {0.f, 0.f, 0.f, 0.f};
#pragma unroll
      for (int kk = 0; kk < KD / 16; ++kk) {
        uint32_t a[4];
        q_fragment(kk, a);
        const int col = 16 * kk + 2 * (lane % 4);
        const uint32_t b0 = col < kg_cols ? *reinterpret_cast<const unsigned*>(row + col) : 0u;
        const uint32_t b1 =
            col + 8 < kg_cols ? *reinterpret_cast<const unsigned*>(row + col + 8) : 0u;
        Mma(acc, a, b0, b1, T());
      }
#pragma unroll
      for (int j = 0; j + 1 < kN / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) sc[j][e] = sc[j + 1][e];
#pragma unroll
      for (int e = 0; e < 4; ++e) sc[kN / 8 - 1][e] = acc[e];
      row += 8 * kg_stride;
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < KD / 16; ++kk) {
      uint32_t a[4];
      q_fragment(kk, a);
      const int chunk = 2 * (kk % 4) + (m & 1);
#pragma unroll
      for (int n = 0; n < kN / 8; n += 2) {
        uint32_t b[4];
        LdMatrixX4(b, k_row + (kk / 4) * kKColBlockBytes + 8 * n * kColBlockRowBytes +
                          uint32_t((chunk ^ r8) << 4));
        Mma(sc[n], a, b[0], b[1], T());
        Mma(sc[n + 1], a, b[2], b[3], T());
      }
    }
  }
}

// P (the softmax's fp32 numerators) rounded to 16 bits: the accumulator
// layout of S is the register A layout of the P V wgmma.
template <typename T, int kN>
__device__ __forceinline__ void PackScores(const float (&sc)[kN / 8][4],
                                           uint32_t (&pk)[kN / 16][4]) {
#pragma unroll
  for (int kk = 0; kk < kN / 16; ++kk) {
    pk[kk][0] = Pack2(sc[2 * kk][0], sc[2 * kk][1], T());
    pk[kk][1] = Pack2(sc[2 * kk][2], sc[2 * kk][3], T());
    pk[kk][2] = Pack2(sc[2 * kk + 1][0], sc[2 * kk + 1][1], T());
    pk[kk][3] = Pack2(sc[2 * kk + 1][2], sc[2 * kk + 1][3], T());
  }
}

#endif  // __CUDA_ARCH_FEAT_SM90_ALL

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Columns 64 h .. 64 h + 63 of the warp's 16 rows of O, normalised (inv0,
// inv1: the rows' 1 / sum) and rounded, by stmatrix into 16 rows x 128
// bytes at `rows` (shared address), 16-byte chunk c of row r at c ^ (r % 8).
// Lane l gives row l % 8 (+ 8 for matrices 1 and 3) of matrix l / 8: rows
// 0-7 / 8-15 of group 2 j, then of group 2 j + 1.
template <typename T, int D>
__device__ __forceinline__ void StMatrixColumns(const WarpState<D>& st, int h,
                                                float inv0, float inv1,
                                                uint32_t rows, int lane) {
  const int m = lane / 8, x = lane % 8;
  const uint32_t st_row = rows + (x + 8 * (m & 1)) * 128;
  const int st_group = m >> 1;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    const int n = 8 * h + 2 * j;
    StMatrixX4(st_row + (((2 * j + st_group) ^ x) << 4),
               Pack2(st.acc[n][0] * inv0, st.acc[n][1] * inv0, T()),
               Pack2(st.acc[n][2] * inv1, st.acc[n][3] * inv1, T()),
               Pack2(st.acc[n + 1][0] * inv0, st.acc[n + 1][1] * inv0, T()),
               Pack2(st.acc[n + 1][2] * inv1, st.acc[n + 1][3] * inv1, T()));
  }
}

// The LSE of the warp's 16 rows (from row `first`), by the lanes that hold
// a row's sum (lane % 4 == 0); rows past seqlen_q are left out.
template <int D>
__device__ __forceinline__ void StoreWarpLse(const Problem& p, const BlockWork& w,
                                             const WarpState<D>& st, float total0,
                                             float total1, int first, int lane,
                                             float* lse) {
  if (lane % 4 == 0) {
    const float totals[2] = {total0, total1};
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int row = first + lane / 4 + 8 * i;
      if (row < p.seqlen_q)
        lse[(int64_t(w.b) * p.heads_q + w.hq) * p.seqlen_q + row] =
            RowLse<D>(st.row_max[i], totals[i], p.scale_log2);
    }
  }
}

// Final O and LSE of the warp's 16 rows through its 2 KB of shared memory
// (`stage`: shared address; `stage_ptr`: the same, generic), 64 columns
// at a time: stmatrix (16-byte chunk c of row r at c ^ (r % 8), so that
// neither side has bank conflicts), then each lane loads 16-byte chunks
// and stores them, 8 lanes to a 128-byte piece of a row.
template <typename T, int D>
__device__ __forceinline__ void StoreOutputStaged(
    const Problem& p, const BlockWork& w, const WarpState<D>& st, float total0,
    float total1, int warp, int lane, uint32_t stage,
    const unsigned char* stage_ptr, T* o, float* lse) {
  static_assert(D % 64 == 0, "64 columns per pass");
  const float inv0 = RowInverse<D>(total0);
  const float inv1 = RowInverse<D>(total1);
  const int first = w.q0 + kRowsPerWarp * warp;
  // Loads: pass-local chunk `x` of rows lane / 8 + 4 it.
  const int x = lane % 8;
  const int rows_valid = p.seqlen_q - first;  // rows of the warp in the sequence
#pragma unroll
  for (int h = 0; h < D / 64; ++h) {
    if (h > 0) __syncwarp();  // the previous pass's loads are done
    StMatrixColumns<T, D>(st, h, inv0, inv1, stage, lane);
    __syncwarp();
    const int col = 64 * h + 8 * x;
    const bool col_valid = col < RowElements<D>(p);  // not a padding column
#pragma unroll
    for (int it = 0; it < 4; ++it) {
      const int r = lane / 8 + 4 * it;
      if (r >= rows_valid || !col_valid) continue;
      const uint4 val = *reinterpret_cast<const uint4*>(
          stage_ptr + r * 128 + ((x ^ (r % 8)) << 4));
      *reinterpret_cast<uint4*>(
          o + ((int64_t(w.b) * p.seqlen_q + first + r) * p.heads_q + w.hq) *
                  RowElements<D>(p) +
          col) = val;
    }
  }
  StoreWarpLse<D>(p, w, st, total0, total1, first, lane, lse);
}

// Final O and LSE of the warp's 16 rows as TMA stores (KSEEK_FA_TMA_STORES),
// 64 columns at a time: stmatrix into one of the warp's kBuffers 2 KB
// buffers at `stage` (1024-byte aligned: StMatrixColumns's layout is then
// the 128-byte swizzle of the map), then lane 0 stores the
// box of 16 rows x 64 columns through o_map; the map leaves out rows past
// seqlen_q and columns past head_dim. A buffer is written again once
// the store that last read it has done so (lane 0's bulk groups: one
// per pass, so kBuffers - 1 newer ones may still be pending).
template <typename T, int D, int kBuffers>
__device__ __forceinline__ void StoreOutputTma(
    const Problem& p, const BlockWork& w, const WarpState<D>& st, float total0,
    float total1, int warp, int lane, uint32_t stage,
    const CUtensorMap* o_map, float* lse) {
  static_assert(D % 64 == 0, "64 columns per pass");
  static_assert(kBuffers >= 1 && kBuffers <= D / 64, "one buffer, up to one per pass");
  const float inv0 = RowInverse<D>(total0);
  const float inv1 = RowInverse<D>(total1);
  const int first = w.q0 + kRowsPerWarp * warp;
  if (first < p.seqlen_q) {  // (the same for every lane)
#pragma unroll
    for (int h = 0; h < D / 64; ++h) {
      const uint32_t buffer = stage + 2048 * (h % kBuffers);
      if (lane == 0) BulkWaitRead<kBuffers - 1>();
      __syncwarp();
      StMatrixColumns<T, D>(st, h, inv0, inv1, buffer, lane);
      FenceProxyAsync();
      __syncwarp();
      if (lane == 0) TmaStore4d(o_map, buffer, 64 * h, w.hq, first, w.b);
    }
  }
  StoreWarpLse<D>(p, w, st, total0, total1, first, lane, lse);
}
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// kSplitMask: the tiles that need no mask in a loop of their own (see
// KSEEK_FA_SPLIT_MASK_LOOP). With KSEEK_FA_TAIL_SPLIT the cluster
// instances also take kTailShares (the launches whose last rounds are
// shared; the others run the instance without, so that they pay nothing
// for the shares' code).
#if KSEEK_FA_TAIL_SPLIT
#define KSEEK_FA_TAIL_PARAM , bool kTailShares = false
#define KSEEK_FA_TAIL_ARG(x) , x
#else
#define KSEEK_FA_TAIL_PARAM
#define KSEEK_FA_TAIL_ARG(x)
#endif
template <typename T, int D, int NC, int BN, int QB, int KD, bool kSplitMask,
          int CL = 1 KSEEK_FA_TAIL_PARAM>
__global__ void __launch_bounds__(WgmmaConfig<D, NC, BN, QB>::kThreads, 1)
    AttentionForwardWgmma(Problem p, const __grid_constant__ CUtensorMap q_map,
                          const __grid_constant__ CUtensorMap k_map,
                          const __grid_constant__ CUtensorMap v_map,
                          T* __restrict__ o, float* __restrict__ lse,
                          const __grid_constant__ CUtensorMap o_map, Scratch scratch) {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr bool kPdlLate = (KSEEK_FA_PDL & KSEEK_FA_PDL_LATE & WgmmaDimBit(D)) != 0;
  // KSEEK_FA_PDL_END: with split keys no trigger at all, so the combine
  // (still a programmatic dependent) launches as the last block exits.
  constexpr bool kPdlEnd = (KSEEK_FA_PDL_END & WgmmaDimBit(D)) != 0;
  const bool may_launch_dependents = !kPdlEnd || p.splits == 1;
  if constexpr ((KSEEK_FA_PDL & WgmmaDimBit(D)) != 0 && !kPdlLate)
    if (may_launch_dependents) LaunchDependents();  // the combine's launch
  using C = WgmmaConfig<D, NC, BN, QB>;
  constexpr int kN = C::kBlockN;
  constexpr bool kFastLocate =
      (KSEEK_FA_FAST_LOCATE & WgmmaDimBit(D)) != 0;
  constexpr int kColBlockBytesQ = kWgRows * kColBlockRowBytes;
  constexpr int kColBlockBytesKV = kN * kColBlockRowBytes;
  constexpr uint32_t kAtomBytes = 1024;  // 8 rows x 128 bytes
  extern __shared__ __align__(128) unsigned char smem[];
  const uint32_t raw = SharedAddress(smem);
  const uint32_t base = (raw + kAtomBytes - 1) & ~(kAtomBytes - 1);
  constexpr int kQB = C::kQBuffers;
  const uint32_t q_smem = base;  // Q buffer b at q_smem + b * kQBytes
  const uint32_t kv_smem = base + kQB * C::kQBytes;
  // The item of round n, from the producer to the consumers (written
  // before the round's arrival on its Q full barrier, read after the
  // wait; the slots are below).
  volatile int* const item_slots =
      reinterpret_cast<volatile int*>(smem + (base - raw) + C::kItemAt);
  constexpr bool kPublish = C::kPublishWork;
  constexpr int kSlotInts = 8;  // with kPublish: item, BlockWork, split (7 used)
  // Round n uses Q buffer n % kQB and its parts' full and empty barriers.
  constexpr int kQParts = C::kQParts;
  const uint32_t barriers = base + C::kBarriersAt;
  auto q_full = [&](int b, int part) { return barriers + 8 * (b * kQParts + part); };
  auto q_empty = [&](int b, int part) {
    return barriers + 8 * (kQB * kQParts + b * kQParts + part);
  };
  // K and V of a stage have barriers of their own: S = Q K^T of a tile
  // starts when its K has landed, and K is released as soon as S is done.
  const uint32_t stage_barriers = barriers + 8 * 2 * kQB * kQParts;
  auto full_k = [&](int s) { return stage_barriers + 8 * s; };
  auto full_v = [&](int s) { return stage_barriers + 8 * (C::kStages + s); };
  auto empty_k = [&](int s) { return stage_barriers + 8 * (2 * C::kStages + s); };
  auto empty_v = [&](int s) { return stage_barriers + 8 * (3 * C::kStages + s); };
  // KSEEK_FA_CAUSAL_CLUSTER_QUEUE (causal pairs in clusters): slot s's
  // full barrier (rank 1's: the slot written) and empty barrier (rank
  // 0's: the slot read), and the slots.
  constexpr bool kMailbox = CL == 2 && C::kMailbox;
  constexpr int kMail = C::kMail;
  [[maybe_unused]] const uint32_t mail = base + C::kMailAt;
  [[maybe_unused]] auto mail_full = [&](int s) { return mail + 8 * s; };
  [[maybe_unused]] auto mail_empty = [&](int s) { return mail + 8 * (kMail + s); };
  [[maybe_unused]] auto mail_slot = [&](int s) { return mail + 16 * kMail + 4 * s; };
  // Items: query tiles x key splits (p.splits is 1 unless split keys); in
  // clusters (KSEEK_FA_CLUSTER) pairs of query tiles, the block of rank r
  // taking the pair's tile r (p.q_tiles counts the pairs).
  constexpr bool kCluster = CL == 2;
  // KSEEK_FA_TAIL_SPLIT: the last rounds' key tiles in even shares, the
  // shares' segments numbered from p.tail_first on.
#if KSEEK_FA_TAIL_SPLIT
  constexpr bool kTail = kCluster && kTailShares;
#else
  constexpr bool kTail = false;
#endif
  int items = p.batch * p.heads_q * p.q_tiles * p.splits;
#if KSEEK_FA_TAIL_SPLIT
  if constexpr (kTail) items = p.tail_first + int(gridDim.x / 2) * p.tail_segs;
#if KSEEK_FA_TAIL_LAUNCHES
  // The whole pairs only: the shares' grid, launched after this one,
  // walks the rest (p.tail_first is the items' count without shares).
  if constexpr (kCluster && !kTail && kTailLaunches<D>) {
    if (p.tail_first < items) {
      items = p.tail_first;
      LaunchDependents();  // (the shares' grid; again where it already ran)
    }
  }
#endif
#endif
  static_assert(CL == 1 || (kCluster && C::kColBlocks >= 2),
                "clusters of two blocks, each loading every other 64-column block");
  // K/V loads' L2 eviction hint (TmaLoad4d): evict last in the cluster
  // instances of these head dims (KSEEK_FA_TMA_CACHE_HINT_CLUSTER).
  constexpr int kKvHint =
      kCluster && (KSEEK_FA_TMA_CACHE_HINT_CLUSTER & WgmmaDimBit(D)) != 0 ? 2 : 0;
  // Step i of an item walks key tile tile_of(w, i) (from the last in the
  // cluster instances of KSEEK_FA_KEYS_FROM_END_CLUSTER's head dims).
  constexpr bool kFromEnd =
      kCluster && (KSEEK_FA_KEYS_FROM_END_CLUSTER & WgmmaDimBit(D)) != 0;
  auto tile_of = [](const BlockWork& w, int i) {
    return kFromEnd ? w.tile_end - 1 - i : w.tile_begin + i;
  };
  // With kTail `split` is a segment's number past p.tail_first where it
  // holds part of its pair's key tiles, else -1.
  auto locate = [&](int item, int& split) {
    if constexpr (kTail) {
#if KSEEK_FA_TAIL_SPLIT
      const int t = item - p.tail_first;
      int pair = 0, begin = 0, end = 0;
      if (t >= 0) {
        const int c = t / p.tail_segs;
        TailSegment(p, c, t - c * p.tail_segs, pair, begin, end);
      }
      BlockWork w = LocateItem<kN, 2 * C::kBlockM, kFastLocate>(
          p, t >= 0 ? p.tail_first + pair : item, split);
      w.q0 += int(ClusterRank()) * C::kBlockM;
      split = -1;
      if (t >= 0 && end - begin < p.tail_tiles) {  // the segment's tiles of the pair's
        w.tile_end = w.tile_begin + end;
        w.tile_begin += begin;
        split = t;
      }
      return w;
#endif
    } else if constexpr (kCluster) {
      BlockWork w = LocateItem<kN, 2 * C::kBlockM, kFastLocate>(p, item, split);
      w.q0 += int(ClusterRank()) * C::kBlockM;
      return w;
    } else {
      return LocateItem<kN, C::kBlockM, kFastLocate>(p, item, split);
    }
  };

  if (threadIdx.x == 0) {
    for (int b = 0; b < kQB; ++b) {
      for (int part = 0; part < kQParts; ++part) {
        BarrierInit(q_full(b, part), 1);
        BarrierInit(q_empty(b, part),  // one per warp of the part's consumers
                    C::kConsumers / kQParts * kWgThreads / 32);
      }
    }
    for (int s = 0; s < C::kStages; ++s) {
      BarrierInit(full_k(s), 1);
      BarrierInit(full_v(s), 1);
      // One arrival per consumer warp (of both blocks in a cluster).
      BarrierInit(empty_k(s), CL * C::kConsumers * kWgThreads / 32);
      BarrierInit(empty_v(s), CL * C::kConsumers * kWgThreads / 32);
    }
    if constexpr (kMailbox) {
      for (int s = 0; s < kMail; ++s) {
        BarrierInit(mail_full(s), 1);
        BarrierInit(mail_empty(s), 1);
      }
    }
    FenceBarrierInit();
  }
  // In a cluster no block touches the other's barriers before they are
  // initialised.
  if constexpr (kCluster)
    ClusterSync();
  else
    __syncthreads();

  // Warpgroup index broadcast from lane 0: ptxas then knows it is uniform
  // across the warp, so the wgmma paths that depend on it are not taken
  // for divergent (which would serialise every wgmma).
  const int wg = __shfl_sync(0xffffffffu, int(threadIdx.x) / kWgThreads, 0);
  if (wg == 0) {
    // Producer: one thread issues every TMA load of the block, item after
    // item; the K/V ring runs on across items (`ring` counts the tiles
    // loaded before the item), so the next item's first tiles load while
    // the consumers finish this one.
    LowerRegisters<C::kProducerRegisters>();
    if (threadIdx.x != 0) return;
    // A cluster's first pair is its index (blocks 2c and 2c + 1 form
    // cluster c).
    int ring = 0, item = kCluster ? blockIdx.x / 2 : blockIdx.x;
#if KSEEK_FA_TAIL_SPLIT
    // With kTail: after the whole pairs, the segments of the cluster's
    // share in order, then past the last item.
    auto tail_next = [&p, items](int next) {
      const int t = next - p.tail_first, c = int(blockIdx.x / 2);
      int pair, begin, end;
      const int j = t - c * p.tail_segs;
      return j < p.tail_segs && TailSegment(p, c, j, pair, begin, end) ? next : items;
    };
    // The first segment of the cluster's share (recomputed: the producer's
    // registers are few).
    auto share_first = [&p] { return p.tail_first + int(blockIdx.x / 2) * p.tail_segs; };
    if constexpr (kTail)
      if (kTailLaunches<D> || item >= p.tail_first) item = tail_next(share_first());
#endif
    // Round n; with KSEEK_FA_CAUSAL_CLUSTER_QUEUE (causal calls) also the
    // pairs rank 0 has handed to rank 1 (rounds 1 .. n's) when it takes
    // round n + 1's, slot n % kMail.
    int n = 0;
    for (;; ++n) {
      KSEEK_FA_TRACE_ONLY(TraceStart(n, 2);)
      // Round n: Q of the item into buffer n % kQB once the consumers'
      // last S of round n - kQB is done, the item published on that
      // buffer's full barrier; past the last item a round with no bytes
      // tells the consumers to stop.
      const int qb = n % kQB;
      // With C::kPublishWork round n's item is in slots (n % 2 kQB) x
      // parts: the consumers read a slot at the start of its round, before
      // they release that round's Q, which this thread waited for at round
      // n - kQB; so round n's slots are written before the wait for its Q
      // buffer. Otherwise in slot qb (x parts), after that wait.
      const int slot0 = (n % (2 * kQB)) * kQParts;
      if constexpr (kPublish) {
        if (item >= items) {
          for (int part = 0; part < kQParts; ++part) {
            item_slots[kSlotInts * (slot0 + part)] = item;
            Wait(q_empty(qb, part), ((n / kQB) & 1) ^ 1);
            Arrive(q_full(qb, part));
          }
          break;
        }
      } else if constexpr (kQParts == 1) {
        Wait(q_empty(qb, 0), ((n / kQB) & 1) ^ 1);
        item_slots[qb] = item;
        if (item >= items) {
          Arrive(q_full(qb, 0));
          break;
        }
      } else if (item >= items) {
        for (int part = 0; part < kQParts; ++part) {
          Wait(q_empty(qb, part), ((n / kQB) & 1) ^ 1);
          item_slots[qb * kQParts + part] = item;
          Arrive(q_full(qb, part));
        }
        break;
      }
      int item_split;
      const BlockWork w = locate(item, item_split);
      KSEEK_FA_TRACE_ONLY(TraceAt(n, 2, 4);
                          TraceItem(n, 2, w.q0, w.tile_end - w.tile_begin, w.hq, w.b);)
      if constexpr (kPublish) {
        // The item and where it lies, published by the arrivals on the
        // parts' Q full barriers.
        for (int part = 0; part < kQParts; ++part) {
          volatile int* const at = item_slots + kSlotInts * (slot0 + part);
          at[0] = item;
          at[1] = w.b;
          at[2] = w.hq;
          at[3] = w.q0;
          at[4] = w.tile_begin;
          at[5] = w.tile_end;
          at[6] = item_split;
        }
      }
#if KSEEK_FA_FAST_LOCATE
      const int hkv =
          kFastLocate ? Divide(w.hq, p.group_div) : w.hq / (p.heads_q / p.heads_kv);
#else
      const int hkv = w.hq / (p.heads_q / p.heads_kv);
#endif
      // K of the item's tile i or its V, into ring slot ring + i once the
      // consumers have released that slot's previous use.
      auto load = [&](int i, bool v) {
        const int r = ring + i, s = RingStage<C::kStages>(r);
        const uint32_t full = v ? full_v(s) : full_k(s);
        Wait(v ? empty_v(s) : empty_k(s), RingPhase<C::kStages>(r) ^ 1);
        ArriveExpectBytes(full, C::kTileBytes);
        const uint32_t dst =
            kv_smem + s * C::kStageBytes + (v ? C::kTileBytes : 0);
        if constexpr (kCluster) {
          // This block's column blocks, into both blocks' stage s (each
          // block's full barrier expects the whole tile).
          for (int cb = int(ClusterRank()); cb < C::kColBlocks; cb += 2)
            TmaLoad4dMulticast<kKvHint>(dst + cb * kColBlockBytesKV, v ? &v_map : &k_map,
                                        full, 0b11, 64 * cb, hkv, tile_of(w, i) * kN,
                                        w.b);
        } else {
          for (int cb = 0; cb < C::kColBlocks; ++cb)
            TmaLoad4d<kKvHint>(dst + cb * kColBlockBytesKV, v ? &v_map : &k_map,
                               full, 64 * cb, hkv, tile_of(w, i) * kN, w.b);
        }
      };
      // Part by part (one part: all at once), Q rows of the part's
      // consumers once they are done with the buffer's previous item.
      for (int part = 0; part < kQParts; ++part) {
        const int h0 = part * C::kConsumers / kQParts;
        const int h1 = (part + 1) * C::kConsumers / kQParts;
        if constexpr (kPublish) {
          Wait(q_empty(qb, part), ((n / kQB) & 1) ^ 1);
        } else if constexpr (kQParts > 1) {
          Wait(q_empty(qb, part), ((n / kQB) & 1) ^ 1);
          item_slots[qb * kQParts + part] = item;
        }
        uint32_t q_bytes = 0;
        for (int h = h0; h < h1; ++h)
          if (w.q0 + kWgRows * h < p.seqlen_q) q_bytes += C::kQHalfBytes;
        ArriveExpectBytes(q_full(qb, part), q_bytes);
        for (int h = h0; h < h1; ++h) {
          if (w.q0 + kWgRows * h >= p.seqlen_q) continue;
          for (int cb = 0; cb < C::kColBlocks; ++cb)
            TmaLoad4d(q_smem + qb * C::kQBytes + h * C::kQHalfBytes + cb * kColBlockBytesQ,
                      &q_map, q_full(qb, part), 64 * cb, w.hq, w.q0 + kWgRows * h, w.b);
        }
      }
      // K runs one tile ahead of V: the consumers issue S of tile i
      // together with P V of tile i - 1.
      const int tiles = w.tile_end - w.tile_begin;
      KSEEK_FA_TRACE_ONLY(TraceAt(n, 2, 5);)
      for (int i = 0; i < tiles; ++i) {
        load(i, false);
        KSEEK_FA_TRACE_ONLY(if (i == 0) TraceAt(n, 2, 6);)
        if (i > 0) load(i - 1, true);
      }
      // Items are taken in order from a queue, like blocks from the
      // hardware's scheduler: an even load under causal masking (heaviest
      // items first) and K/V shared in L2 by the blocks running together.
      // KSEEK_FA_EARLY_NEXT: the next item is asked for before the wait for
      // the last V's stage, which hides the atomic's round trip behind that
      // wait. (Asked for before the loop, the answer would be held in a
      // register through all the loads, and the producer's 24 registers
      // would spill.)
      // (In a cluster: the next pair in the static order, every other
      // round backwards under causal masking: KSEEK_FA_CAUSAL_CLUSTER; or
      // with KSEEK_FA_CAUSAL_CLUSTER_QUEUE causal pairs from the queue.)
      auto from_queue = [&scratch] { return int(gridDim.x) + atomicAdd(scratch.queue, 1); };
      int next = 0;
      if constexpr (KSEEK_FA_EARLY_NEXT != 0 && !kCluster) next = from_queue();
#if KSEEK_FA_CAUSAL_CLUSTER && KSEEK_FA_CAUSAL_CLUSTER_QUEUE
      if constexpr (kMailbox) {
        // Rank 0: the cluster's next pair (the first wave's are the
        // clusters' indices), into rank 1's next slot once rank 1 has read
        // that slot's previous pair, and into its own slot (read back
        // below: held in a register through the last load, it made the
        // producer's 24 spill).
        if (p.causal && ClusterRank() == 0) {
          const int s = n % kMail;
          Wait(mail_empty(s), ((n / kMail) & 1) ^ 1);
          const int got = int(gridDim.x / 2) + atomicAdd(scratch.queue, 1);
          *reinterpret_cast<volatile int*>(smem + (mail_slot(s) - raw)) = got;
          StoreClusterInt(PeerAddress(mail_slot(s), 1), got);
          ArriveReleaseCluster(PeerAddress(mail_full(s), 1));
        }
      }
#endif
      if (tiles > 0) load(tiles - 1, true);
      KSEEK_FA_TRACE_ONLY(TraceEnd(n, 2, 7);)
      ring += tiles;
#if KSEEK_FA_TAIL_SPLIT
      if (kTail && p.tail_segs > 0) {
        if (item < p.tail_first) {
          item += gridDim.x / 2;
          if (item >= p.tail_first) item = tail_next(share_first());
        } else {
          item = tail_next(item + 1);
        }
        continue;
      }
#endif
#if KSEEK_FA_CAUSAL_CLUSTER && KSEEK_FA_CAUSAL_CLUSTER_QUEUE
      if constexpr (kMailbox) {
        if (p.causal) {
          // The pair that rank 0 put in slot n % kMail (rank 1: once it
          // has; then rank 0 may write the slot again).
          const int s = n % kMail;
          if (ClusterRank() != 0) Wait<true>(mail_full(s), (n / kMail) & 1);
          item = *reinterpret_cast<volatile int*>(smem + (mail_slot(s) - raw));
          if (ClusterRank() != 0) ArriveClusterIf(PeerAddress(mail_empty(s), 0), true);
          continue;
        }
      }
#endif
      if constexpr (kCluster && (KSEEK_FA_CAUSAL_CLUSTER & WgmmaDimBit(D)) != 0) {
        const int clusters = int(gridDim.x / 2), c = int(blockIdx.x / 2);
        const bool back = p.causal && ((n + 1) & 1) != 0;
        item = (n + 1) * clusters + (back ? clusters - 1 - c : c);
      } else if constexpr (kCluster)
        item += gridDim.x / 2;
      else if constexpr (KSEEK_FA_EARLY_NEXT != 0)
        item = next;
      else
        item = from_queue();
    }
    // The last of the call's takers (blocks, or clusters of `blocks` where
    // rank 0 takes the pairs) to finish sets the queue back to 0 for the
    // stream's next call.
    [[maybe_unused]] auto reset_queue = [&scratch](unsigned blocks) {
      if (atomicAdd(scratch.queue + 1, 1) == int(gridDim.x / blocks) - 1) {
        scratch.queue[0] = 0;
        scratch.queue[1] = 0;
      }
    };
    if constexpr (kCluster) {
      // The block stays until both blocks' consumers have released every
      // stage (their arrivals may target this block's barriers): each
      // empty barrier past its last use.
      for (int r = ring; r < ring + C::kStages; ++r) {
        Wait(empty_k(RingStage<C::kStages>(r)), RingPhase<C::kStages>(r) ^ 1);
        Wait(empty_v(RingStage<C::kStages>(r)), RingPhase<C::kStages>(r) ^ 1);
      }
      if constexpr (kMailbox) {
        if (p.causal && ClusterRank() == 0) {
          // Rank 1's reads of the last slots (of rounds 1 .. n) arrive
          // here: this block stays until they have (each slot's barrier
          // past its last use). Then the last cluster to finish sets the
          // queue back to 0.
          for (int k = n > kMail ? n - kMail : 0; k < n; ++k)
            Wait(mail_empty(k % kMail), (k / kMail) & 1);
          reset_queue(2);
        }
      }
    } else {
      reset_queue(1);
    }
    if constexpr (kPdlLate)
      if (may_launch_dependents) LaunchDependents();  // the combine's launch
    return;
  }

  // Consumers: warpgroup cwg owns rows [64 cwg, 64 cwg + 64) of each item;
  // its warp `warp` (0 .. 7 over both) rows 16 warp .. 16 warp + 15.
  RaiseRegisters<C::kConsumerRegisters>();
  const int cwg = wg - 1;
  const int warp = threadIdx.x / 32 - kWgThreads / 32, lane = threadIdx.x % 32;
  // In a cluster a stage's release also arrives on the other block's
  // barrier (its producer loads into both blocks' stages).
  const uint32_t peer = kCluster ? ClusterRank() ^ 1u : 0u;
  auto to_peer = [&](uint32_t bar, bool pred) {
    if constexpr (kCluster) ArriveClusterIf(PeerAddress(bar, peer), pred);
  };

  // Ping-pong: a warpgroup issues its GEMMs of a tile only after the
  // previous one (in the ring 0, 1[, 2]) issued its own, so one's softmax
  // runs under the others' GEMMs. The last consumer lets consumer 0 go
  // first; all take and pass the turn once per tile, across items;
  // consumer 0 takes the last pass at exit so that no arrival is left
  // pending. KSEEK_FA_PINGPONG turns it off per head dim (FA3 has no
  // such barrier above head_dim 128), KSEEK_FA_FIRST_S_TURN leaves the
  // item's first S out of the turns (as FA3 does).
  //
  // No wgmma is issued inside a branch that depends on the tile: ptxas
  // serialises every wgmma of the kernel when it cannot prove which groups
  // are complete at a wait. So a consumer computes every tile of the
  // item's range, also tiles past its own rows' limits (they are masked
  // to -inf and add nothing), and the first tile (S only) and the last
  // P V are peeled out of the loop.
  const int next_turn = kTurnBarrier + (cwg + 1) % C::kConsumers;
  constexpr bool kTurns = (KSEEK_FA_PINGPONG & HeadDimBit(D)) != 0;
  constexpr bool kFirstTurn = kTurns && (KSEEK_FA_FIRST_S_TURN & HeadDimBit(D)) != 0;
  // O's columns: at head_dim 256 with narrow scores (KD 192: head_dim 136
  // to 192) only the first 192 (KSEEK_FA_NARROW_PV), the rest being zeros.
  constexpr int KO = KSEEK_FA_NARROW_PV && D == 256 && KD == 192 ? KD : D;
  constexpr bool kTma = kWgmmaTmaStores<C, D, KD>;
  constexpr bool kTmaInV = kWgmmaTmaInV<C, D, KD>;
  // O's rescale by a tile's new maxima: after the P V that goes with the
  // tile's S, or (KSEEK_FA_RESCALE_UNDER_S) just before the next P V is
  // issued, while the next tile's S runs on the tensor cores.
  // Rows' references move lazily (SoftmaxScores' kLazy); `rescale`: whether
  // O needs the rescale by `alpha` (SoftmaxScores' answer: always true
  // without kLazy).
  constexpr bool kLazy =
      (KSEEK_FA_LAZY_RESCALE & WgmmaDimBit(D)) != 0;
  // Tiles after an item's first try their softmax without maxima
  // (KSEEK_FA_SUM_CHECK), not on the short-key tiles (64 and 80 keys:
  // items of one or two tiles).
  constexpr bool kSumCheck = (KSEEK_FA_SUM_CHECK & WgmmaDimBit(D)) != 0 && kN >= 128;
  // Q in registers (KSEEK_FA_Q_REGS): the warp's rows as S's A fragments,
  // the Q buffer released once they are loaded.
  // (Not with three consumers: at 160 registers ptxas spilled and
  // serialised the wgmma.)
  constexpr bool kQRegs = (KSEEK_FA_Q_REGS & WgmmaDimBit(D)) != 0 && D <= 128 &&
                          C::kConsumers == 2 && kN <= KSEEK_FA_Q_REGS_MAX_N &&
                          kN >= KSEEK_FA_Q_REGS_MIN_N &&
                          (kQB == 2 || KSEEK_FA_Q_REGS_ONE_Q_BUFFER != 0);
  [[maybe_unused]] uint32_t qf[kQRegs ? KD / 16 : 1][4];
  constexpr bool kVAfterS = (KSEEK_FA_V_AFTER_S & WgmmaDimBit(D)) != 0;
  constexpr bool kRescaleUnderS =
      KSEEK_FA_RESCALE_UNDER_S == 2 ||
      (KSEEK_FA_RESCALE_UNDER_S == 1 && kN > 128) ||
      (KSEEK_FA_RESCALE_UNDER_S == 3 && (kN > 128 || D > 128));
  if (kTurns && cwg == C::kConsumers - 1) NamedBarrierArrive(kTurnBarrier, 2 * kWgThreads);
  int ring = 0;
  const int qpart = kQParts == 1 ? 0 : cwg;  // this consumer's part of Q
  // The item of round m and its block, once its Q has landed (the
  // producer publishes the item on that barrier); false past the last.
  auto take = [&](const int m, BlockWork& w, int& split) {
    const int qb = m % kQB;
    Wait(q_full(qb, qpart), (m / kQB) & 1);
    // Broadcast from lane 0 so that ptxas knows the item, and all that
    // depends on it, is uniform across the warp.
    volatile int* const slot =
        item_slots + (kPublish ? kSlotInts * ((m % (2 * kQB)) * kQParts + qpart)
                               : qb * kQParts + qpart);
    const int item = __shfl_sync(0xffffffffu, slot[0], 0);
    if (item >= items) return false;
    if constexpr (kPublish) {
      w.b = __shfl_sync(0xffffffffu, slot[1], 0);
      w.hq = __shfl_sync(0xffffffffu, slot[2], 0);
      w.q0 = __shfl_sync(0xffffffffu, slot[3], 0);
      w.tile_begin = __shfl_sync(0xffffffffu, slot[4], 0);
      w.tile_end = __shfl_sync(0xffffffffu, slot[5], 0);
      split = __shfl_sync(0xffffffffu, slot[6], 0);
    } else {
      w = locate(item, split);
    }
    return true;
  };
  for (int n = 0;; ++n) {
    const int qb = n % kQB;
    BlockWork w;
    int split;
    // (KSEEK_FA_TRACE: consumer 0's first thread stamps the round.)
    KSEEK_FA_TRACE_ONLY(const bool tracer = threadIdx.x == kWgThreads;
                        if (tracer) TraceStart(n, 1);)
    if (!take(n, w, split)) break;
    KSEEK_FA_TRACE_ONLY(if (tracer) {
      TraceAt(n, 1, 4);
      TraceItem(n, 1, w.q0, w.tile_end - w.tile_begin, w.hq, w.b);
    })
    const uint32_t q_rows = q_smem + qb * C::kQBytes + cwg * C::kQHalfBytes;
    if constexpr (kQRegs) {
      LoadQRegisters<KD>(qf, q_rows, warp % 4, lane);
      __syncwarp();
      if (lane == 0) Arrive(q_empty(qb, qpart));  // the rows are in registers
    }
    const int wg_first = w.q0 + kWgRows * cwg;
    const int wg_mask_from = KeyLimit(p, wg_first);
    const int first_row = w.q0 + kRowsPerWarp * warp;
    const int limit0 = KeyLimit(p, first_row + lane / 4);
    const int limit1 = KeyLimit(p, first_row + lane / 4 + 8);

    WarpState<KO> st;
    st.Clear();
    uint32_t pk[kN / 16][4];  // P of the pending tile
    // The stage whose V this warp holds for O's stores (kTmaInV), or -1.
    int held_v = -1;

    const int tiles = w.tile_end - w.tile_begin;
    if (tiles > 0) {
      float alpha[2];
      bool rescale = true;
      const int s0 = RingStage<C::kStages>(ring);
      Wait(full_k(s0), RingPhase<C::kStages>(ring));
      KSEEK_FA_TRACE_ONLY(if (tracer) TraceAt(n, 1, 5);)
      if constexpr (kFirstTurn) NamedBarrier(kTurnBarrier + cwg, 2 * kWgThreads);
      float sc[kN / 8][4];
      HoldRegisters(sc);
      if constexpr (kQRegs) HoldRegisters(qf);
      WgmmaFence();
      if constexpr (kQRegs)
        IssueScoresWgmmaQRegs<T, kN, KD>(sc, qf, kv_smem + s0 * C::kStageBytes);
      else
        IssueScoresWgmma<T, D, kN, KD>(sc, q_rows, kv_smem + s0 * C::kStageBytes);
      WgmmaCommit();
      HoldRegisters(sc);
      if constexpr (kFirstTurn) NamedBarrierArrive(next_turn, 2 * kWgThreads);
      WgmmaWait<0>();
      HoldRegisters(sc);
      KSEEK_FA_TRACE_ONLY(if (tracer) TraceAt(n, 1, 6);)
      if (lane == 0) {
        Arrive(empty_k(s0));
        to_peer(empty_k(s0), true);
        if (!kQRegs && tiles == 1) Arrive(q_empty(qb, qpart));  // the item's last S is done
      }
      const int k0 = tile_of(w, 0) * kN;
      if (k0 + kN > wg_mask_from) MaskScores<kN>(sc, k0, lane, limit0, limit1);
      rescale = SoftmaxScores<KO, kN, kLazy>(sc, st, p.scale_log2, alpha);  // O is still 0
      PackScores<T, kN>(sc, pk);
      int pending = RingStage<C::kStages>(ring);  // the stage whose P V is not issued
      // Ring tile r's K (stage s, at `stage`) and the pending tile's V
      // once landed (kVAfterS: V once S is issued), then in this
      // consumer's turn S = Q K^T (Q at q) into sc and O += P V of the
      // pending tile: a step's GEMMs.
      auto issue_s_and_pv = [&](float (&sc)[kN / 8][4], const uint32_t q,
                                const int r, const int s, const uint32_t stage) {
        if constexpr (kVAfterS) {
          Wait(full_k(s), RingPhase<C::kStages>(r));
        } else if constexpr (KSEEK_FA_TEST_KV_TOGETHER) {
          // Both tests issued before either result is needed: one test's
          // latency, not two waits' in a row, where both have landed.
          const bool k_in = TestWait(full_k(s), RingPhase<C::kStages>(r));
          const bool v_in = TestWait(full_v(pending), RingPhase<C::kStages>(r - 1));
          if (!k_in) Wait(full_k(s), RingPhase<C::kStages>(r));
          if (!v_in) Wait(full_v(pending), RingPhase<C::kStages>(r - 1));
        } else {
          Wait(full_k(s), RingPhase<C::kStages>(r));
          Wait(full_v(pending), RingPhase<C::kStages>(r - 1));
        }
        if constexpr (kTurns) NamedBarrier(kTurnBarrier + cwg, 2 * kWgThreads);

        // The operands are pinned on both sides of the fence, so that the
        // compiler neither sinks the previous tile's rescale and packing
        // past it nor reads an accumulator while its wgmma runs.
        HoldRegisters(sc);
        HoldRegisters(st.acc);
        HoldRegisters(pk);
        if constexpr (kQRegs) HoldRegisters(qf);
        WgmmaFence();
        if constexpr (kQRegs)
          IssueScoresWgmmaQRegs<T, kN, KD>(sc, qf, stage);
        else
          IssueScoresWgmma<T, D, kN, KD>(sc, q, stage);
        WgmmaCommit();
        if constexpr (kRescaleUnderS) {
          if (rescale) RescaleRows<KO>(st, alpha);  // to the pending tile's maxima
          HoldRegisters(st.acc);
          WgmmaFence();
        }
        if constexpr (kVAfterS) Wait(full_v(pending), RingPhase<C::kStages>(r - 1));
        AccumulatePVWgmma<T, D, kN, KO>(st.acc, pk,
                                    kv_smem + pending * C::kStageBytes);
        WgmmaCommit();
        HoldRegisters(sc);
        HoldRegisters(st.acc);
        if constexpr (kTurns) NamedBarrierArrive(next_turn, 2 * kWgThreads);
      };
      // Tile i: S = Q K^T of it, then O += P V of the previous one, then
      // its softmax. kMask: 0 no mask, 1 masked, 2 masked where a key of
      // the tile is at or past the rows' limits.
      auto step = [&](const int i, auto mask_mode) {
        constexpr int kMask = decltype(mask_mode)::kMode;
        const int r = ring + i, s = RingStage<C::kStages>(r);
        const uint32_t stage = kv_smem + s * C::kStageBytes;
        const int k0 = tile_of(w, i) * kN;
        float sc[kN / 8][4];
        issue_s_and_pv(sc, q_rows, r, s, stage);

        WgmmaWait<1>();  // S only
        HoldRegisters(sc);
        // `when`: the same in every lane of the warp; k_part, q_part: the
        // stage's K, the item's Q (on its last tile).
        auto release_k = [&](bool when, bool k_part = true, bool q_part = true) {
#if KSEEK_FA_PREDICATED_ARRIVE
          ArriveIf(empty_k(s), k_part && when && lane == 0);
          to_peer(empty_k(s), k_part && when && lane == 0);
          ArriveIf(q_empty(qb, qpart),
                   !kQRegs && q_part && when && lane == 0 && i == tiles - 1);  // the item's last S
#else
          if (when && lane == 0) {
            if (k_part) {
              Arrive(empty_k(s));
              to_peer(empty_k(s), true);
            }
            if (!kQRegs && q_part && i == tiles - 1) Arrive(q_empty(qb, qpart));  // the item's last S is done
          }
#endif
        };
        auto mask = [&]() {
          if constexpr (kMask == 1) {
            MaskScores<kN>(sc, k0, lane, limit0, limit1);
          } else if constexpr (kMask == 2) {
            if (k0 + kN > wg_mask_from) MaskScores<kN>(sc, k0, lane, limit0, limit1);
          }
        };
        auto softmax = [&]() {
          return SoftmaxScores<KO, kN, kLazy,
                               !((KSEEK_FA_UNMASKED_NO_INF_TEST & WgmmaDimBit(D)) != 0 &&
                                 kMask == 0)>(sc, st, p.scale_log2, alpha);
        };
        // kSumCheck, on tiles without a mask: the softmax without maxima
        // first (every row has seen a key by then: the item's first tile
        // and, from the end, every masked tile come before); where a warp's
        // test fails, once the pending P V is done, its rows' references
        // move (finite sums), or its S is computed again by mma.sync from
        // the K (and Q) held until then (KSEEK_FA_SC_K_GLOBAL: K from global
        // memory, its stage released after S) and takes the softmax with
        // maxima.
        constexpr bool kFast = kSumCheck && kMask == 0;
        constexpr bool kEarlyRelease = (KSEEK_FA_SC_EARLY_RELEASE & WgmmaDimBit(D)) != 0;
        constexpr bool kKGlobal = KSEEK_FA_SC_K_GLOBAL != 0;
        bool sum_ok = true;
        [[maybe_unused]] float tile_sum[2];
        if constexpr (kFast) {
          if constexpr (kKGlobal) release_k(true, true, false);  // K: S again reads it from global
          sum_ok = SumCheckScores<KO, kN>(sc, st, p.scale_log2, tile_sum);
          rescale = false;
          if constexpr (kEarlyRelease) release_k(sum_ok, !kKGlobal, true);
        } else {
          release_k(true);
          mask();
          rescale = softmax();
        }
        if constexpr ((KSEEK_FA_PIN_PV_WAIT & WgmmaDimBit(D)) != 0)
          StoreIfNegative(q_rows, st.row_sum[0] + st.row_sum[1]);
        WgmmaWait<0>();
        HoldRegisters(pk);
        HoldRegisters(st.acc);
#if KSEEK_FA_PREDICATED_ARRIVE
        ArriveIf(empty_v(pending), lane == 0);
        to_peer(empty_v(pending), lane == 0);
#else
        if (lane == 0) {
          Arrive(empty_v(pending));
          to_peer(empty_v(pending), true);
        }
#endif
        if constexpr (kFast) {
          if (!sum_ok) {
            if (RebaseScores<KO, kN>(sc, st, p.scale_log2, tile_sum, alpha)) {
              rescale = true;
            } else {
              {  // S again
#if KSEEK_FA_SC_K_GLOBAL
                const int e = RowElements<D>(p);
                const int hkv = w.hq / (p.heads_q / p.heads_kv);
                const T* kg = static_cast<const T*>(scratch.k) +
                              ((int64_t(w.b) * p.seqlen_k + k0) * p.heads_kv + hkv) * e;
                ScoresByMma<T, kN, KD, kQRegs, true>(sc, qf, q_rows, stage, warp % 4, lane, kg,
                                                     p.heads_kv * e, p.head_dim);
#else
                ScoresByMma<T, kN, KD, kQRegs>(sc, qf, q_rows, stage, warp % 4, lane);
#endif
              }
              rescale = softmax();
            }
          }
          release_k(!kEarlyRelease || !sum_ok, !kKGlobal, true);
        }
        if constexpr (!kRescaleUnderS) {
          if (rescale) RescaleRows<KO>(st, alpha);
        }
        PackScores<T, kN>(sc, pk);
        pending = s;
      };
      // The tiles that need no mask in a loop of their own (kSplitMask),
      // then the rest: with the mask's test (a branch) between the waits
      // for S and for P V, ptxas put the second wait before the softmax.
      // From the end (kFromEnd) the masked tiles (from wg_mask_from / kN
      // on) come first, then the unmasked ones.
      int i = 1;
      if constexpr (kFromEnd && kSplitMask) {
        const int masked_end =
            min(tiles, max(1, w.tile_end - max(w.tile_begin, wg_mask_from / kN)));
        for (; i < masked_end; ++i) step(i, MaskMode<1>());
        for (; i < tiles; ++i) step(i, MaskMode<0>());
      } else {
        const int unmasked_end =
            kSplitMask ? min(tiles, max(1, wg_mask_from / kN - w.tile_begin)) : 1;
        for (; i < unmasked_end; ++i) step(i, MaskMode<0>());
        constexpr bool kAlwaysMask = (KSEEK_FA_ALWAYS_MASK & WgmmaDimBit(D)) != 0;
        for (; i < tiles; ++i) step(i, MaskMode<kSplitMask || kAlwaysMask ? 1 : 2>());
      }
      Wait(full_v(pending), RingPhase<C::kStages>(ring + tiles - 1));
      if constexpr (kRescaleUnderS) {
        if (rescale) RescaleRows<KO>(st, alpha);
      }
      HoldRegisters(st.acc);
      HoldRegisters(pk);
      WgmmaFence();
      AccumulatePVWgmma<T, D, kN, KO>(st.acc, pk, kv_smem + pending * C::kStageBytes);
      WgmmaCommit();
      WgmmaWait<0>();
      HoldRegisters(pk);
      HoldRegisters(st.acc);
      KSEEK_FA_TRACE_ONLY(if (tracer) TraceAt(n, 1, 7);)
      if (kTmaInV && p.splits == 1 && (!kTail || split < 0) &&
          tiles >= (D == 128 ? KSEEK_FA_TMA_IN_V_MIN_TILES_128 : KSEEK_FA_TMA_IN_V_MIN_TILES))
        held_v = pending;  // released once O's stores have read it
      else if (lane == 0) {
        Arrive(empty_v(pending));
        to_peer(empty_v(pending), true);
      }
    } else if (!kQRegs && lane == 0) {
      Arrive(q_empty(qb, qpart));  // no key for any row: Q is not read
    }
    ring += tiles;

    float total[2];
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      total[i] = st.row_sum[i];
      total[i] += __shfl_xor_sync(0xffffffffu, total[i], 1);
      total[i] += __shfl_xor_sync(0xffffffffu, total[i], 2);
    }
    bool merged = false;  // a tail pair's rows merged into this segment's
#if KSEEK_FA_TAIL_SPLIT
    // A tail segment's pair, the clusters whose shares hold its segments
    // (c_lo .. c_hi), the warp's first row in the pair and its counter.
    int t_pair = 0, t_lo = 0, t_hi = 0, t_slot = 0, pair_row = 0;
    int* t_count = nullptr;
    if constexpr (kTail) {
      if (split >= 0) {
        const int c = split / p.tail_segs;
        int begin, end;
        TailSegment(p, c, split - c * p.tail_segs, t_pair, begin, end);
        t_lo = t_pair * p.tail_tiles / p.tail_share;
        t_hi = min(int(gridDim.x / 2) - 1, ((t_pair + 1) * p.tail_tiles - 1) / p.tail_share);
        t_slot = TailSlot(p, c, t_pair);
        pair_row = int(ClusterRank()) * C::kBlockM + kRowsPerWarp * warp;
        t_count = scratch.tail_count + (t_pair * 2 + int(ClusterRank())) * (C::kConsumers * 4) + warp;
        // The pair's first tiles, and every other segment counted: merge.
        // (Decided by vote: a branch on a shuffled atomic's result would
        // serialise every wgmma of the kernel.)
        if (KSEEK_FA_TAIL_MERGE && begin == 0 && t_hi - t_lo <= 2) {
          int seen = -1;
          if (lane == 0) seen = atomicAdd(t_count, 0);
          merged = __any_sync(0xffffffffu, seen == t_hi - t_lo);
          if (merged) {
            __threadfence();  // the rows below read after the count
            MergeTailRows<D, KO, 2 * C::kBlockM>(p, scratch, st, total, t_pair, t_lo, t_hi,
                                                 pair_row, lane);
          }
        }
      }
    }
#endif
    const bool whole = !kTail || split < 0 || merged;  // (a tail segment's part: below)
    // Through the warp's own staging memory, or straight from registers
    // (Q's shared memory may already hold the next item's rows).
    // (kseek_launch has checked that o is 16-byte aligned.)
    if (p.splits == 1 && kTma && whole) {
      StoreOutputTma<T, KO, C::kTmaBuffers>(
          p, w, st, total[0], total[1], warp, lane,
          base + C::kStagedAt + 2048 * C::kTmaBuffers * warp, &o_map, lse);
    } else if (kTmaInV && held_v >= 0) {
      // (held_v is the same for every consumer warp: the item's tiles.)
      // Both consumers' last P V have read this V tile before either
      // stages O in it; the stores have read it before its release.
      NamedBarrier(kStagedOBarrier, C::kConsumers * kWgThreads);
      constexpr int kBuffers = KO >= 128 ? kTmaInVBuffers<C> : 1;
      StoreOutputTma<T, KO, kBuffers>(
          p, w, st, total[0], total[1], warp, lane,
          kv_smem + held_v * C::kStageBytes + C::kTileBytes + kBuffers * 2048 * warp,
          &o_map, lse);
      if (lane == 0) {  // the V stage released once the stores have read it
        BulkWaitRead<0>();
        Arrive(empty_v(held_v));
        to_peer(empty_v(held_v), true);
      }
    } else if (p.splits == 1 && C::kStagedStores && whole)
      StoreOutputStaged<T, KO>(p, w, st, total[0], total[1], warp, lane,
                              base + C::kStagedAt + 2048 * warp,
                              smem + (base - raw) + C::kStagedAt + 2048 * warp, o, lse);
    else if (p.splits == 1 && C::kWideStores && whole)
      StoreOutputWide<T, KO>(p, w, st, total[0], total[1], warp, lane, o, lse);
    else if (p.splits == 1 && whole)
      StoreOutputDirect<T, KO>(p, w, st, total[0], total[1], warp, lane, o, lse);
#if KSEEK_FA_TAIL_SPLIT
    else if (kTail && p.splits == 1) {
      // Part of a tail pair: its rows into the scratch, then counted; the
      // pair's last segment's warp combines every segment's rows into O,
      // the others go on to the next item. The pair's segments are those
      // of the shares t_lo .. t_hi.
      StoreTailPart<D, KO, 2 * C::kBlockM>(p, scratch, st, total, t_slot, pair_row, first_row,
                                           lane);
      __threadfence();
      __syncwarp();
      // The answer by vote, not by a shuffle of lane 0's count: a branch on
      // a shuffled atomic's result serialised every wgmma of the kernel
      // (ptxas C7520); on a vote it does not.
      int before = -1;
      if (lane == 0) before = atomicAdd(t_count, 1);
      if (__any_sync(0xffffffffu, before == t_hi - t_lo)) {
        if (lane == 0) *t_count = 0;  // for the stream's next call
        __threadfence();
        CombineTailRows<T, D, KO, 2 * C::kBlockM>(p, scratch, w, t_pair, t_lo, t_hi, pair_row,
                                                  first_row, lane, o, lse);
      }
    }
#endif
    else
      StorePartial<D, false, KO>(p, scratch, w, st, total[0], total[1], warp, lane, split);
#if KSEEK_FA_TAIL_SPLIT
    if (merged && lane == 0) *t_count = 0;  // for the stream's next call
#endif
    KSEEK_FA_TRACE_ONLY(if (tracer) TraceEnd(n, 1, 8);)
  }
  if (kTurns && cwg == 0) NamedBarrier(kTurnBarrier, 2 * kWgThreads);
  // The last TMA stores done before the block's shared memory goes.
  if constexpr (kTma || kTmaInV)
    if (lane == 0) BulkWait<0>();
#if KSEEK_FA_TAIL_SPLIT && KSEEK_FA_TAIL_LAUNCHES
  // The shares' grid ends after the whole pairs' grid (one thread's wait
  // holds the grid): the call's end is both grids'.
  if constexpr (kTail && kTailLaunches<D>)
    if (threadIdx.x == kWgThreads) GridDependencyWait();
#endif
#endif
}

// ---------------------------------------------------------------------------
// Combining the splits: one warp per query row, or a block per row.

__device__ __forceinline__ float WarpMax(float x) {
#pragma unroll
  for (int m = 16; m > 0; m /= 2) x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, m));
  return x;
}
__device__ __forceinline__ float WarpSum(float x) {
#pragma unroll
  for (int m = 16; m > 0; m /= 2) x += __shfl_xor_sync(0xffffffffu, x, m);
  return x;
}

// Rows of kCombineWarps warps each (Problem::combine_warps 1), or with many
// splits and few rows one row per block (combine_warps kCombineWarps), warp
// w taking splits w, w + 8, ... and warp 0 adding the others' sums from
// shared memory. Each warp's lanes hold D / 32 columns and load kInFlight
// splits before using them: 4 after the decode kernel (measured with it,
// NOTES.md v3g), 1 after the others (four measured 1-4% slower behind the
// WGMMA kernel's 2-3 splits of thousands of rows).
template <typename T, int D, int kInFlight>
__global__ void __launch_bounds__(32 * kCombineWarps)
    CombineSplits(Problem p, T* __restrict__ o, float* __restrict__ lse, Scratch scratch) {
  constexpr int kPerLane = D / 32;  // 2, 4, 6 or 8 columns
  extern __shared__ __align__(128) unsigned char smem[];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  const int per_row = p.combine_warps;
  const int64_t rows_total = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  const int64_t row =
      int64_t(blockIdx.x) * (kCombineWarps / per_row) + warp / per_row;
  const int first_split = warp % per_row;
  const bool active = row < rows_total;
  if (!active && per_row == 1) return;
  // Launched as a dependent of the attention kernel (KSEEK_FA_PDL): its
  // partials are complete and visible only after this.
  if constexpr ((kWgmmaDependentCombine | kMmaDependentCombine) != 0) GridDependencyWait();

  float vals[kPerLane];
#pragma unroll
  for (int c = 0; c < kPerLane; ++c) vals[c] = 0.f;
  float mx = -INFINITY, total = 0.f;
  if (active) {
    // The splits' LSEs, lane l taking splits l, l + 32, ...; then each
    // split's weight exp(lse_s - lse) (the same for every lane).
    const float* const part = scratch.split_lse + row;
    float part_max = -INFINITY;
    for (int s = lane; s < p.splits; s += 32)
      part_max = fmaxf(part_max, part[s * rows_total]);
    mx = WarpMax(part_max);
    if (mx != -INFINITY) {
      float lane_total = 0.f;
      for (int s = lane; s < p.splits; s += 32)
        lane_total += expf(part[s * rows_total] - mx);
      total = WarpSum(lane_total);
      for (int s0 = first_split; s0 < p.splits; s0 += kInFlight * per_row) {
        float ws[kInFlight];
        float2 x[kInFlight][kPerLane / 2];
#pragma unroll
        for (int u = 0; u < kInFlight; ++u) {
          // Past the last split: weight 0 and no load.
          const int s = s0 + u * per_row;
          const bool real = s < p.splits;
          ws[u] = real ? expf(part[s * rows_total] - mx) / total : 0.f;
          const float* src =
              scratch.split_o + (int64_t(s) * rows_total + row) * D + lane * kPerLane;
#pragma unroll
          for (int c = 0; c < kPerLane / 2; ++c)
            x[u][c] = real ? *reinterpret_cast<const float2*>(src + 2 * c)
                           : make_float2(0.f, 0.f);
        }
#pragma unroll
        for (int u = 0; u < kInFlight; ++u)
#pragma unroll
          for (int c = 0; c < kPerLane / 2; ++c) {
            vals[2 * c] += ws[u] * x[u][c].x;
            vals[2 * c + 1] += ws[u] * x[u][c].y;
          }
      }
    }
  }
  if (per_row > 1) {
    float* const sums = reinterpret_cast<float*>(smem);  // [warp][D]
    if (first_split != 0) {
#pragma unroll
      for (int c = 0; c < kPerLane; ++c) sums[warp * D + lane * kPerLane + c] = vals[c];
    }
    __syncthreads();
    if (first_split != 0 || !active) return;
    for (int u = 1; u < per_row; ++u)
#pragma unroll
      for (int c = 0; c < kPerLane; ++c)
        vals[c] += sums[(warp + u) * D + lane * kPerLane + c];
  }

  const int i = int(row % p.seqlen_q);
  const int64_t pair = row / p.seqlen_q;  // batch * heads_q + head
  const int64_t b = pair / p.heads_q, hq = pair % p.heads_q;
  uint32_t packed[kPerLane / 2];
#pragma unroll
  for (int c = 0; c < kPerLane / 2; ++c)
    packed[c] = Pack2(vals[2 * c], vals[2 * c + 1], T());
  if (lane * kPerLane < RowElements<D>(p)) {  // not a padding column
    T* out = o + ((b * p.seqlen_q + i) * p.heads_q + hq) * RowElements<D>(p) +
             lane * kPerLane;
    if constexpr (kPerLane == 2) {
      *reinterpret_cast<uint32_t*>(out) = packed[0];
    } else if constexpr (kPerLane == 4) {
      *reinterpret_cast<uint2*>(out) = make_uint2(packed[0], packed[1]);
    } else if constexpr (kPerLane == 6) {
      // 12 bytes, 4-byte aligned; head_dim (a multiple of 8) may end
      // inside them, so pair by pair.
#pragma unroll
      for (int c = 0; c < 3; ++c)
        if (lane * kPerLane + 2 * c < RowElements<D>(p))
          reinterpret_cast<uint32_t*>(out)[c] = packed[c];
    } else {
      *reinterpret_cast<uint4*>(out) =
          make_uint4(packed[0], packed[1], packed[2], packed[3]);
    }
  }
  if (lane == 0) lse[row] = mx == -INFINITY ? -INFINITY : mx + logf(total);
}

// ---------------------------------------------------------------------------
// Host side.

// Splits of the key range per query tile: 1 when the blocks fill most of a
// wave, else the fewest splits within 85% of the best wave efficiency
// (blocks * splits / slots over its ceiling), each split at least
// min_tiles key tiles, the partials within the scratch buffer.
int ChooseSplits(int64_t blocks, int64_t slots, int key_tiles,
                 int64_t rows_total, int head_dim, int cap = kMaxSplits,
                 int min_tiles = kMinTilesPerSplit,
                 int keep_pct = KSEEK_FA_SPLIT_KEEP_PCT) {
  if (blocks * 5 >= slots * 4) return 1;
  int max_splits = key_tiles / min_tiles;
  if (max_splits > cap) max_splits = cap;
  while (max_splits > 1 && max_splits * rows_total * head_dim > kScratchOFloats)
    --max_splits;
  if (max_splits <= 1) return 1;
  float efficiency[kMaxCombineSplits + 1];
  float best = 0.f;
  for (int s = 1; s <= max_splits; ++s) {
    const float waves = float(blocks * s) / float(slots);
    efficiency[s] = waves / ceilf(waves);
    if (efficiency[s] > best) best = efficiency[s];
  }
  for (int s = 1; s <= max_splits; ++s)
    if (efficiency[s] >= float(keep_pct) / 100.f * best) return s;
  return 1;
}

// Key splits of the WGMMA kernel (KSEEK_FA_SPLIT_COST): the count with the
// least estimated time, in units of one item's key tile: waves x (key
// tiles per split + KSEEK_FA_SPLIT_ITEM_TILES, the item's own cost: the
// first S and last P V not overlapped, the store), plus with splits the
// combine (each split's fp32 partial O read and O written at about 3 TB/s,
// against a tile's FLOPs at about 5 TFLOP/s per SM), times
// KSEEK_FA_SPLIT_COMBINE_WEIGHT / 4. 1 means whole items: the wave
// efficiency alone (ChooseSplits) split prefill_q333_k4097 at head_dim
// 128 (96 items, 73% of a wave) four ways, 0.78x FA3, which does not
// split there.
int WgmmaSplits(int64_t blocks, int64_t slots, int key_tiles,
                int64_t rows_total, int block_n, int head_dim) {
  int max_splits = key_tiles / kMinTilesPerSplit;
  if (max_splits > kMaxSplits) max_splits = kMaxSplits;
  while (max_splits > 1 && max_splits * rows_total * head_dim > kScratchOFloats)
    --max_splits;
  int best_splits = 1;
  double best = 0.0;
  for (int s = 1; s <= (max_splits > 1 ? max_splits : 1); ++s) {
    const int tiles = (key_tiles + s - 1) / s;
    const int splits = (key_tiles + tiles - 1) / tiles;  // as LaunchWgmma has it
    const int64_t waves = (blocks * splits + slots - 1) / slots;
    double cost = double(waves) * (tiles + KSEEK_FA_SPLIT_ITEM_TILES);
    if (splits > 1)
      cost += 0.25 * KSEEK_FA_SPLIT_COMBINE_WEIGHT * (splits + 0.5) *
              double(rows_total) / (76.8 * block_n);
    if (s == 1 || cost < 0.99 * best) {
      best = cost;
      best_splits = splits;
    }
  }
  return best_splits;
}

// ---------------------------------------------------------------------------
// Scratch of a call.
//
// A call's kernels use scratch memory (Scratch: the work queue and the
// split partials) that no other call may use while they run; so that calls
// on different streams may run at once, no two streams share it:
//   - Calls on one stream run one after another, so each stream has scratch
//     of its own, found by cudaStreamGetId (ids, unlike handles, are never
//     reused): the WGMMA kernel's queue counters (they read 0 when a launch
//     starts and its last block resets them; zeroed on the stream before
//     its first use: 8 bytes of device memory per stream that ever called,
//     never freed) and, once the stream has split keys, a partials buffer
//     from cudaMalloc, grown (to a power of two, 1 MB at least) when a call
//     needs more. The call holds the buffer's lock from Bind until its
//     kernels are launched, so that two host threads calling on one stream
//     cannot interleave their launches over it. At most
//     kMaxStreamPartials streams keep a buffer: past that, the one least
//     recently used and not being bound is freed once the device is idle
//     (cudaDeviceSynchronize: no kernel still reads it; a stream's own
//     buffer is grown after cudaStreamSynchronize).
//   - A call captured into a CUDA graph runs whenever the graph is
//     launched, beside anything: its partials and queue are allocated in
//     the capture (graph allocation nodes, from a memory pool of the
//     kernel's own per device, created at the first captured call), the
//     queue zeroed by a memset node (a small operation ahead of the WGMMA
//     kernel at every launch of the graph).
// Calls that are not captured make no pool calls: a process whose
// sandbox forbids what the driver does to map a pool's memory (the
// harness's kernel host) failed every split-key call with the pool, while
// cudaMalloc works there. The runtime calls that a graph capture in
// another thread would forbid (cudaMalloc, cudaFree, creating the pool)
// run with this thread's capture mode relaxed, as a caching allocator does.
struct StreamPartials {
  unsigned long long stream_id = 0;
  std::mutex busy;  // held by the call that bound it, until its launches are done
  void* memory = nullptr;
  size_t bytes = 0;
  uint64_t last_use = 0;
};
struct DeviceScratch {
  int device = 0;
  cudaMemPool_t pool = nullptr;  // for captured calls, created at the first
  std::vector<std::pair<unsigned long long, int*>> queues;  // stream id, its pair
  int* spare = nullptr;  // unassigned pairs, from the last cudaMalloc
  int spare_pairs = 0;
  std::vector<StreamPartials*> partials;
  uint64_t uses = 0;
#if KSEEK_FA_TAIL_SPLIT
  std::vector<std::pair<unsigned long long, int*>> tail_counts;  // stream id, its counters
#endif
};
// Never freed: kernels may still run when the library is unloaded.
std::mutex g_scratch_mutex;
std::vector<DeviceScratch*> g_scratch;
constexpr int kQueuePairsPerAllocation = 4096;
constexpr int kMaxStreamPartials = 16;
constexpr size_t kMinPartialsBytes = size_t(1) << 20;

// g_error as `what`, then the runtime's name for `err` (thread-local text).
thread_local char g_error_text[256];
bool FailWith(const char* what, cudaError_t err) {
  (void)cudaGetLastError();
  snprintf(g_error_text, sizeof(g_error_text), "%s (%s)", what, cudaGetErrorString(err));
  g_error = g_error_text;
  return false;
}

// This thread's stream capture mode relaxed for the object's lifetime.
class RelaxedCaptureMode {
 public:
  RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  ~RelaxedCaptureMode() { cudaThreadExchangeStreamCaptureMode(&mode_); }
  RelaxedCaptureMode(const RelaxedCaptureMode&) = delete;
  RelaxedCaptureMode& operator=(const RelaxedCaptureMode&) = delete;

 private:
  cudaStreamCaptureMode mode_ = cudaStreamCaptureModeRelaxed;
};

// The current device's scratch state, created on first use (the caller
// holds g_scratch_mutex); null with g_error set on failure.
DeviceScratch* CurrentDeviceScratch() {
  int device = 0;
  const cudaError_t err = cudaGetDevice(&device);
  if (err != cudaSuccess) {
    FailWith("no current CUDA device", err);
    return nullptr;
  }
  for (DeviceScratch* d : g_scratch)
    if (d->device == device) return d;
  DeviceScratch* d = new DeviceScratch;
  d->device = device;
  g_scratch.push_back(d);
  return d;
}

// ds's memory pool, created on first use (the caller holds
// g_scratch_mutex); false with g_error set on failure. It keeps what it
// has reserved (no release threshold): each launch of a graph maps no new
// memory.
bool DevicePool(DeviceScratch* ds) {
  if (ds->pool != nullptr) return true;
  cudaMemPoolProps props = {};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = ds->device;
  cudaMemPool_t pool = nullptr;
  const cudaError_t err = cudaMemPoolCreate(&pool, &props);
  if (err != cudaSuccess)
    return FailWith("cannot create a device memory pool for a captured call's scratch", err);
  uint64_t keep = UINT64_MAX;
  cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep);
  ds->pool = pool;
  return true;
}

// The scratch of one call on `stream`: Bind finds or allocates it before
// the call's kernels are launched (they take get()); the destructor, once
// they are, frees in stream order what Bind allocated in a capture and
// lets other calls bind the stream's partials.
class CallScratch {
 public:
  explicit CallScratch(cudaStream_t stream) : stream_(stream) {}
  ~CallScratch() {
    for (int i = 0; i < allocated_; ++i) cudaFreeAsync(allocations_[i], stream_);
  }
  CallScratch(const CallScratch&) = delete;
  CallScratch& operator=(const CallScratch&) = delete;

  // Sets the work queue (with `queue`: the WGMMA kernel's) and, when p
  // splits keys, the split partials, `rows_total` x `d` floats per split for
  // O; with `tail_rows` (KSEEK_FA_TAIL_SPLIT's parts, no split keys) that
  // many rows of partials and the stream's tail counters; false with
  // g_error set on failure.
  bool Bind(const Problem& p, bool queue, int64_t rows_total, int d, int64_t tail_rows = 0) {
    if (!queue && p.splits <= 1 && tail_rows == 0) return true;  // nothing to bind: no runtime calls
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    cudaError_t err = cudaStreamIsCapturing(stream_, &capture);
    if (err != cudaSuccess)
      return FailWith("cannot tell whether the stream is being captured into a graph", err);
    if (capture == cudaStreamCaptureStatusInvalidated)
      return FailWith("the stream's graph capture has been invalidated",
                      cudaErrorStreamCaptureInvalidated);
    const bool captured = capture == cudaStreamCaptureStatusActive;
    const int64_t partials = p.splits > 1 ? int64_t(p.splits) * rows_total : tail_rows;
    const size_t bytes = size_t(partials * (d + 1)) * sizeof(float);
    RelaxedCaptureMode relaxed;
    std::lock_guard<std::mutex> lock(g_scratch_mutex);
    DeviceScratch* ds = CurrentDeviceScratch();
    if (ds == nullptr) return false;
    void* split = nullptr;
    if (captured) {
      if (!DevicePool(ds)) return false;
      if (queue && !GraphInts(ds, 2, "the work queue", &scratch_.queue)) return false;
      if (partials > 0) {
        err = cudaMallocFromPoolAsync(&split, bytes, ds->pool, stream_);
        if (err != cudaSuccess)
          return FailWith("cannot allocate the split-key partials in the graph", err);
        allocations_[allocated_++] = split;
      }
#if KSEEK_FA_TAIL_SPLIT
      if (tail_rows > 0 && !GraphInts(ds, kTailCounts, "the tail counters", &scratch_.tail_count))
        return false;
#endif
    } else {
      unsigned long long id = 0;
      err = cudaStreamGetId(stream_, &id);
      if (err != cudaSuccess) return FailWith("cannot read the stream's id", err);
      if (queue && !StreamQueue(ds, id)) return false;
      if (partials > 0 && !StreamBuffer(ds, id, bytes, &split)) return false;
#if KSEEK_FA_TAIL_SPLIT
      if (tail_rows > 0 && !StreamTailCounts(ds, id)) return false;
#endif
    }
    if (split != nullptr) {
      scratch_.split_o = static_cast<float*>(split);
      scratch_.split_lse = scratch_.split_o + partials * d;
    }
    return true;
  }

  const Scratch& get() const { return scratch_; }

 private:
  // `count` zeroed ints in the graph being captured: allocated from ds's
  // pool and cleared in stream order, so each launch of the graph starts
  // from zeros (freed after the call); `what` names them in the error.
  bool GraphInts(DeviceScratch* ds, int count, const char* what, int** ints) {
    char text[128];
    void* m = nullptr;
    cudaError_t err = cudaMallocFromPoolAsync(&m, count * sizeof(int), ds->pool, stream_);
    if (err != cudaSuccess) {
      snprintf(text, sizeof(text), "cannot allocate %s in the graph", what);
      return FailWith(text, err);
    }
    allocations_[allocated_++] = m;
    err = cudaMemsetAsync(m, 0, count * sizeof(int), stream_);
    if (err != cudaSuccess) {
      snprintf(text, sizeof(text), "cannot clear %s in the graph", what);
      return FailWith(text, err);
    }
    *ints = static_cast<int*>(m);
    return true;
  }

  // The ints of stream `id` in `of` (its queue pair, its tail counters),
  // or null where it has none yet.
  static int* StreamInts(const std::vector<std::pair<unsigned long long, int*>>& of,
                         unsigned long long id) {
    for (const auto& x : of)
      if (x.first == id) return x.second;
    return nullptr;
  }

#if KSEEK_FA_TAIL_SPLIT
  // The stream's tail counters, zeroed once; the kernel leaves them 0 (the
  // caller holds g_scratch_mutex).
  bool StreamTailCounts(DeviceScratch* ds, unsigned long long id) {
    if ((scratch_.tail_count = StreamInts(ds->tail_counts, id)) != nullptr) return true;
    void* counts = nullptr;
    cudaError_t err = cudaMalloc(&counts, kTailCounts * sizeof(int));
    if (err != cudaSuccess) return FailWith("cannot allocate device memory for the tail counters", err);
    err = cudaMemsetAsync(counts, 0, kTailCounts * sizeof(int), stream_);
    if (err != cudaSuccess) {
      cudaFree(counts);
      return FailWith("cannot clear the tail counters", err);
    }
    ds->tail_counts.emplace_back(id, static_cast<int*>(counts));
    scratch_.tail_count = static_cast<int*>(counts);
    return true;
  }
#endif

  // The stream's queue pair (the caller holds g_scratch_mutex).
  bool StreamQueue(DeviceScratch* ds, unsigned long long id) {
    if ((scratch_.queue = StreamInts(ds->queues, id)) != nullptr) return true;
    if (ds->spare_pairs == 0) {
      void* pairs = nullptr;
      const cudaError_t err = cudaMalloc(&pairs, kQueuePairsPerAllocation * 2 * sizeof(int));
      if (err != cudaSuccess) return FailWith("cannot allocate device memory for the work queues", err);
      ds->spare = static_cast<int*>(pairs);
      ds->spare_pairs = kQueuePairsPerAllocation;
    }
    int* pair = ds->spare;
    const cudaError_t err = cudaMemsetAsync(pair, 0, 2 * sizeof(int), stream_);
    if (err != cudaSuccess) return FailWith("cannot clear the stream's work queue", err);
    ds->spare += 2;
    --ds->spare_pairs;
    ds->queues.emplace_back(id, pair);
    scratch_.queue = pair;
    return true;
  }

  // Sets *memory to the stream's partials buffer of at least `bytes`,
  // locked for this call (the caller holds g_scratch_mutex); false with
  // g_error set on failure. A stream without one gets one: past
  // kMaxStreamPartials, the least recently used one that no call holds is
  // freed first, once the device is idle (its stream's calls may still
  // read it; when the device cannot be waited for, as while another thread
  // captures a graph, none is freed this time). A buffer too small is
  // replaced once the stream's earlier calls are done (cudaFree promises no
  // wait for memory from cudaMalloc).
  bool StreamBuffer(DeviceScratch* ds, unsigned long long id, size_t bytes, void** memory) {
    StreamPartials* sp = nullptr;
    for (StreamPartials* x : ds->partials)
      if (x->stream_id == id) sp = x;
    if (sp == nullptr) {
      if (int(ds->partials.size()) >= kMaxStreamPartials) {
        if (cudaDeviceSynchronize() == cudaSuccess)
          EvictOldest(ds);
        else
          (void)cudaGetLastError();
      }
      sp = new StreamPartials;
      sp->stream_id = id;
      ds->partials.push_back(sp);
    }
    busy_ = std::unique_lock<std::mutex>(sp->busy);
    sp->last_use = ++ds->uses;
    if (sp->bytes < bytes) {
      size_t grown = kMinPartialsBytes;
      while (grown < bytes) grown *= 2;
      if (sp->memory != nullptr) {
        const cudaError_t err = cudaStreamSynchronize(stream_);
        if (err != cudaSuccess)
          return FailWith("cannot wait for the stream's earlier calls to grow its scratch", err);
        cudaFree(sp->memory);
        sp->memory = nullptr;
        sp->bytes = 0;
      }
      void* fresh = nullptr;
      const cudaError_t err = cudaMalloc(&fresh, grown);
      if (err != cudaSuccess)
        return FailWith("cannot allocate device memory for the split-key partials", err);
      sp->memory = fresh;
      sp->bytes = grown;
    }
    *memory = sp->memory;
    return true;
  }

  // Frees the least recently used partials buffer that no call holds (the
  // caller holds g_scratch_mutex and has waited for the device).
  static void EvictOldest(DeviceScratch* ds) {
    int oldest = -1;
    for (int i = 0; i < int(ds->partials.size()); ++i)
      if (oldest < 0 || ds->partials[i]->last_use < ds->partials[oldest]->last_use) {
        if (!ds->partials[i]->busy.try_lock()) continue;
        if (oldest >= 0) ds->partials[oldest]->busy.unlock();
        oldest = i;
      }
    if (oldest < 0) return;
    StreamPartials* evicted = ds->partials[oldest];
    if (evicted->memory != nullptr) cudaFree(evicted->memory);
    evicted->busy.unlock();
    delete evicted;
    ds->partials.erase(ds->partials.begin() + oldest);
  }

  cudaStream_t stream_;
  Scratch scratch_ = {nullptr, nullptr, nullptr};
  void* allocations_[3] = {nullptr, nullptr, nullptr};
  int allocated_ = 0;
  std::unique_lock<std::mutex> busy_;  // the stream's partials, held until the destructor
};

// The combine kernel over the split partials of p: one warp per row, or
// (warps_per_row kCombineWarps) a block per row; `many_in_flight`:
// KSEEK_FA_COMBINE_IN_FLIGHT splits' loads in flight per warp (behind the
// decode kernel), else one;
// `dependent`: a programmatic dependent of the attention kernel just
// launched (KSEEK_FA_PDL; correct either way, as the combine waits for
// that kernel in both).
// The attribute that launches a grid as a programmatic dependent of the
// grid before it in its stream (KSEEK_FA_PDL; its GridDependencyWait waits
// for that grid).
cudaLaunchAttribute DependentLaunch() {
  cudaLaunchAttribute attr;
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  return attr;
}

template <typename T, int D>
void LaunchCombine(Problem p, T* o, float* lse, const Scratch& scratch,
                   cudaStream_t stream, bool dependent, int warps_per_row = 1,
                   bool many_in_flight = false) {
  p.combine_warps = warps_per_row;
  const int64_t rows_total = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  const int rows_per_block = kCombineWarps / warps_per_row;
  const int smem = warps_per_row > 1 ? kCombineWarps * D * int(sizeof(float)) : 0;
  const auto kernel = many_in_flight ? CombineSplits<T, D, KSEEK_FA_COMBINE_IN_FLIGHT>
                                     : CombineSplits<T, D, 1>;
  const dim3 grid(unsigned((rows_total + rows_per_block - 1) / rows_per_block));
  const dim3 block(32 * kCombineWarps);
  if (dependent) {
    cudaLaunchAttribute attr[1] = {DependentLaunch()};
    // grid, block, dynamic shared memory, stream, attributes.
    cudaLaunchConfig_t config = {grid, block, size_t(smem), stream, attr, 1};
    cudaLaunchKernelEx(&config, kernel, p, o, lse, scratch);
  } else {
    kernel<<<grid, block, smem, stream>>>(p, o, lse, scratch);
  }
}

// K and V bytes of one (batch, head) pair (GQA: a query head's share of
// its K/V head; in the mma.sync kernel a pair is a row group of p.pack
// heads).
template <typename T, int D>
int64_t KvBytesPerPair(const Problem& p) {
  const int64_t group = p.heads_q / p.pack / p.heads_kv;
  return (2 * int64_t(p.seqlen_k) * D * int64_t(sizeof(T)) + group - 1) / group;
}

// (batch, head) pairs per L2 section: as many as have K/V within `bytes`
// (kL2SectionBytes; the WGMMA kernel's KSEEK_FA_WGMMA_L2_SECTION_MB).
template <typename T, int D>
int SectionPairs(const Problem& p, int64_t bytes = kL2SectionBytes) {
  const int64_t pairs = int64_t(p.batch) * (p.heads_q / p.pack);
  const int64_t section = bytes / KvBytesPerPair<T, D>(p);
  return int(section < 1 ? 1 : section > pairs ? pairs : section);
}

// When the kernel's last block finishes, in key tiles (an item costs its
// tiles and one more), the blocks taking p's items in order each as soon
// as it is free: the kernel's queue, without the producer running ahead.
template <int kN, int kM>
int64_t QueueMakespan(const Problem& p, int64_t items, int sms) {
  std::priority_queue<int64_t, std::vector<int64_t>, std::greater<int64_t>> free_at;
  for (int i = 0; i < sms; ++i) free_at.push(0);
  int64_t last = 0;
  for (int64_t item = 0; item < items; ++item) {
    const BlockWork w = LocateBlock<kN, kM>(p, int(item / p.splits), int(item % p.splits));
    const int64_t done = free_at.top() + (w.tile_end - w.tile_begin) + 1;
    free_at.pop();
    free_at.push(done);
    if (done > last) last = done;
  }
  return last;
}

// The WGMMA kernel's sections of (batch, head) pairs (items are taken
// section after section, under causal masking heaviest first within
// each). SectionPairs gives the largest that keep a section's K/V in L2;
// how the sections cut the items decides how evenly they end: at
// ragged_s4097_hd128_causal (16 pairs) sections of 7, 7 and 2 pairs left
// the last section's heavy items for the end, and the blocks idle
// behind them (0.74x FA3). With KSEEK_FA_SECTION_SEARCH, under causal
// masking, the size from that largest down to its half, and one section
// where all K/V takes at most KSEEK_FA_L2_WHOLE_MB, whose queue ends
// first (QueueMakespan; the larger size on a tie). The search runs on the
// host, once per shape and thread (a few milliseconds at most: at most
// 16 K items simulated; beyond that the largest size), its answer kept.
template <typename T, int D, int kN, int kM>
int WgmmaSectionPairs(Problem p, int64_t items, int sms) {
  const int mb = !p.causal && (KSEEK_FA_FULL_L2_SECTION_DIMS & WgmmaDimBit(D)) != 0
                     ? KSEEK_FA_FULL_L2_SECTION_MB
                     : KSEEK_FA_WGMMA_L2_SECTION_MB;
  const int most = SectionPairs<T, D>(p, int64_t(mb) << 20);
  const int candidates = most - (most + 1) / 2 + 2;
  if (!KSEEK_FA_SECTION_SEARCH || !p.causal || most <= 1 ||
      items * candidates > 16384)
    return most;
  struct Known {
    int batch, heads_q, heads_kv, seqlen_q, seqlen_k, splits, sms, pairs;
  };
  thread_local std::vector<Known> known;
  for (const Known& k : known)
    if (k.batch == p.batch && k.heads_q == p.heads_q && k.heads_kv == p.heads_kv &&
        k.seqlen_q == p.seqlen_q && k.seqlen_k == p.seqlen_k &&
        k.splits == p.splits && k.sms == sms)
      return k.pairs;
  const int64_t pairs = int64_t(p.batch) * p.heads_q;
  const int64_t kv_bytes = pairs * KvBytesPerPair<T, D>(p);
  int best = most;
  p.section_pairs = most;
  int64_t best_end = QueueMakespan<kN, kM>(p, items, sms);
  auto consider = [&](int size) {
    p.section_pairs = size;
    const int64_t end = QueueMakespan<kN, kM>(p, items, sms);
    if (end < best_end) {
      best_end = end;
      best = size;
    }
  };
  for (int size = most - 1; size >= (most + 1) / 2; --size) consider(size);
  if (pairs > most && kv_bytes <= (int64_t(KSEEK_FA_L2_WHOLE_MB) << 20)) consider(int(pairs));
  if (known.size() >= 64) known.erase(known.begin());
  known.push_back(Known{p.batch, p.heads_q, p.heads_kv, p.seqlen_q, p.seqlen_k,
                        p.splits, sms, best});
  return best;
}

// Blocks of the mma.sync kernel (kDecode: the decode kernel; KD < D its
// narrow instance) per SM, with its shared memory limit raised; 0 when it
// does not fit.
template <typename T, int D, bool kDecode, int R = 1, int KD = D>
int MmaBlocksPerSm() {
  static const int n = [] {
    using C = DecodeConfig<D, R>;
    auto kernel = kDecode ? AttentionDecode<T, D, R, KD> : AttentionForward<T, D, KD>;
    const int threads = kDecode ? C::kBlockThreads : kThreads;
    const int smem = kDecode ? C::kSmemBytes : Config<D>::kSmemBytes;
    int blocks = 0;
    if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             smem) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads,
                                                      smem) != cudaSuccess)
      return 0;
    return blocks;
  }();
  return n;
}

// Blocks per SM that the decode kernel's long splits are planned for: two
// with two-tile blocks where KSEEK_FA_DECODE2_LONG_BLOCKS asks for them and
// they fit, else one.
template <typename T, int D, int R>
int LongSplitBlocksPerSm() {
  const bool two = R >= 2 && KSEEK_FA_DECODE2_LONG_BLOCKS == 2 && MmaBlocksPerSm<T, D, true, R>() >= 2;
  return two ? 2 : 1;
}

// Rows per block, key splits and blocks of the mma.sync kernel (kDecode:
// the decode kernel) on p, which has p.pack set. With `long_splits` (the
// decode kernel on GQA shapes that version 1 would split many ways) the
// splits are planned for one block per SM (two-tile blocks:
// KSEEK_FA_DECODE2_LONG_BLOCKS), at most kDecodeMaxSplitsGqa of
// at least kDecodeMinTilesGqa key tiles each: fewer, longer splits than
// for two blocks per SM (measured faster: NOTES.md v3g).
template <typename T, int D, bool kDecode, int R = 1>
int64_t PlanMma(Problem& p, int sms, bool long_splits = false) {
  const int64_t group_rows = int64_t(p.seqlen_q) * p.pack;
  const int rows_per_block = kDecode ? DecodeConfig<D, R>::kRows : kBlockM;
  p.q_tiles = int((group_rows + rows_per_block - 1) / rows_per_block);
  const int64_t blocks = int64_t(p.batch) * (p.heads_q / p.pack) * p.q_tiles;
  p.section_pairs = SectionPairs<T, D>(p);
  const int key_tiles = (p.seqlen_k + kBlockN - 1) / kBlockN;
  const int64_t rows_total = int64_t(p.batch) * p.heads_q * p.seqlen_q;
  const int cap = long_splits ? kDecodeMaxSplitsGqa
                  : kDecode   ? kMaxCombineSplits
                  : KSEEK_FA_MMA_PACK_GQA ? kMaxMmaSplits : kMaxSplits;
  const int fit = MmaBlocksPerSm<T, D, kDecode, R>();
  const int64_t slots = int64_t(sms) * (long_splits ? LongSplitBlocksPerSm<T, D, R>() : fit);
  const int wanted =
      ChooseSplits(blocks, slots, key_tiles, rows_total, D, cap,
                   long_splits ? kDecodeMinTilesGqa : kMinTilesPerSplit,
                   long_splits ? KSEEK_FA_LONG_SPLIT_KEEP_PCT
                               : KSEEK_FA_SPLIT_KEEP_PCT);
  p.tiles_per_split = (key_tiles + wanted - 1) / wanted;
  p.splits = (key_tiles + p.tiles_per_split - 1) / p.tiles_per_split;
  return blocks;
}

// The mma.sync kernel, with split keys when its blocks fill less than 80%
// of a wave; the decode kernel instead when a row group has at most
// KSEEK_FA_DECODE_MAX_ROWS rows, except for GQA shapes at head_dim <= 128
// that it would split and version 1 would split fewer than
// DecodeMinSplitsGqa(rows) ways (2 for groups of at most 16 rows, 12 for
// 17-32): there (2-13 splits) the decode kernel's short splits measured
// 2-10% slower than version 1 (NOTES.md v3f, v3g), and at 17-32 rows its
// long splits too (v3m, v3n), while it won at head_dim
// 256, without splits, without GQA with 2-15 splits (up to 16 are taken),
// and, with its long splits and a block per row in CombineSplits, on GQA
// shapes that version 1 splits 14-27 ways (batch-1 and batch-4 decode with
// 16-32k keys).
template <typename T, int D, int R = 1>
int LaunchMma(Problem p, const kseek_launch_args* args, int sms) {
  // The query heads that share a K/V head in one row group (pack), so a
  // warp's 16 rows cover GQA heads of few queries and K/V is read once per
  // K/V head; then more key splits (kMaxMmaSplits).
  p.pack = KSEEK_FA_MMA_PACK_GQA ? p.heads_q / p.heads_kv : 1;
  // Row groups of 17-32 rows: the decode kernel with two row tiles per warp
  // (KSEEK_FA_DECODE_TWO_TILES), one block per group and split.
  if constexpr (R == 1 && (KSEEK_FA_DECODE_TWO_TILES & HeadDimBit(D)) != 0 && D <= 128) {
    const int64_t rows = int64_t(p.seqlen_q) * p.pack;
    if (KSEEK_FA_DECODE_KERNEL > 0 && rows > kDecodeRows && rows <= 2 * kDecodeRows &&
        rows <= KSEEK_FA_DECODE_MAX_ROWS)
      return LaunchMma<T, D, 2>(p, args, sms);
  }
  bool decode = KSEEK_FA_DECODE_KERNEL > 0 &&
                int64_t(p.seqlen_q) * p.pack <= KSEEK_FA_DECODE_MAX_ROWS &&
                MmaBlocksPerSm<T, D, true, R>() > 0;
  int64_t blocks = 0;
  if (decode && D <= 128 && p.pack > 1) {
    Problem v1 = p;
    PlanMma<T, D, false>(v1, sms);
    if (v1.splits >= DecodeMinSplitsGqa(int64_t(p.seqlen_q) * p.pack)) {
      blocks = PlanMma<T, D, true, R>(p, sms, true);
    } else {
      blocks = PlanMma<T, D, true, R>(p, sms);
      decode = p.splits == 1;
    }
  } else if (decode) {
    blocks = PlanMma<T, D, true, R>(p, sms);
    decode = D == 256 || p.splits == 1 ||
             (p.pack == 1 && p.splits <= kDecodeMaxSplitsNoGqa);
  }
  if (!decode) {
    if (MmaBlocksPerSm<T, D, false>() == 0) {
      g_error = "the attention kernel does not fit on this device's SMs";
      return 1;
    }
    blocks = PlanMma<T, D, false>(p, sms);
  }

  using KernelFn = void (*)(Problem, const T*, const T*, const T*, T*, float*, Scratch);
  KernelFn kernel = decode ? AttentionDecode<T, D, R> : AttentionForward<T, D>;
  const int threads = decode ? kDecodeThreads : kThreads;
  const int smem = decode ? DecodeConfig<D, R>::kSmemBytes : Config<D>::kSmemBytes;
  // Head dims of at most 3/4 of D (80/96 on D = 128, 136-192 on D = 256):
  // the same instance's narrow twin (KSEEK_FA_DECODE_NARROW; version 1's
  // too), where as many of its blocks fit on an SM.
  if constexpr (D >= 128 && (KSEEK_FA_DECODE_NARROW & HeadDimBit(D)) != 0) {
    constexpr int KD = D / 4 * 3;
    if (p.head_dim <= KD) {
      if (!decode) {
        if (MmaBlocksPerSm<T, D, false, 1, KD>() >= MmaBlocksPerSm<T, D, false>())
          kernel = AttentionForward<T, D, KD>;
      } else if (MmaBlocksPerSm<T, D, true, R, KD>() >= MmaBlocksPerSm<T, D, true, R>()) {
        kernel = AttentionDecode<T, D, R, KD>;
      }
    }
  }
  cudaStream_t stream = static_cast<cudaStream_t>(args->stream);
  CallScratch scratch(stream);
  if (!scratch.Bind(p, false, int64_t(p.batch) * p.heads_q * p.seqlen_q, D)) return 1;
  T* o = static_cast<T*>(args->tensors[3].data);
  float* lse = static_cast<float*>(args->tensors[4].data);
  kernel<<<dim3(unsigned(blocks), unsigned(p.splits)), threads, smem,
           stream>>>(p, static_cast<const T*>(args->tensors[0].data),
                     static_cast<const T*>(args->tensors[1].data),
                     static_cast<const T*>(args->tensors[2].data), o, lse,
                     scratch.get());
  // Behind the decode kernel, from KSEEK_FA_DECODE_ROW_COMBINE_MIN_SPLITS
  // splits (batch-1 decode: ~50 splits of 16 rows), a block per row, so
  // that the combine is not a chain of loads per warp.
  if (p.splits > 1) {
    const bool per_row = decode && p.splits >= KSEEK_FA_DECODE_ROW_COMBINE_MIN_SPLITS;
    LaunchCombine<T, D>(p, o, lse, scratch.get(), stream,
                        (kMmaDependentCombine & HeadDimBit(D)) != 0,
                        per_row ? kCombineWarps : 1, decode);
  }
  if (cudaGetLastError() != cudaSuccess) {
    g_error = "attention kernel launch failed";
    return 1;
  }
  return 0;
}

// cuTensorMapEncodeTiled, a driver entry point reached through the runtime
// (no link against the driver library); null when the driver lacks it.
using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType,
                                   cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*,
                                   const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion,
                                   CUtensorMapFloatOOBfill);

EncodeTiledFn TensorMapEncoder() {
  static const EncodeTiledFn encoder = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000,
                                         cudaEnableDefault,
                                         &found) != cudaSuccess ||
        found != cudaDriverEntryPointSuccess)
      return EncodeTiledFn(nullptr);
    return reinterpret_cast<EncodeTiledFn>(fn);
  }();
  return encoder;
}

// A BSHD tensor [batch, rows, heads, head_dim] as a 4-D tensor map,
// innermost dimension first (head_dim, heads, rows, batch), read in boxes
// of 64 columns x `box_rows` rows of one head and one batch, 128-byte
// swizzled. Boxes reaching past `rows` are zero-filled and never cross
// into the next batch; so are columns past head_dim (the kernel's D
// rounds it up to whole 64-column blocks), which then add nothing to S
// and give O columns that are not stored.
template <typename T>
bool EncodeBshd(EncodeTiledFn encode, CUtensorMap* map, const void* data,
                int batch, int rows, int heads, int head_dim, int box_rows) {
  const cuuint64_t hd = cuuint64_t(head_dim);
  const cuuint64_t dims[4] = {hd, cuuint64_t(heads), cuuint64_t(rows),
                              cuuint64_t(batch)};
  const cuuint64_t strides[3] = {hd * sizeof(T), cuuint64_t(heads) * hd * sizeof(T),
                                 cuuint64_t(rows) * heads * hd * sizeof(T)};
  const cuuint32_t box[4] = {64, 1, cuuint32_t(box_rows), 1};
  const cuuint32_t element_strides[4] = {1, 1, 1, 1};
  return encode(map,
                kIsHalf<T> ? CU_TENSOR_MAP_DATA_TYPE_FLOAT16
                           : CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
                4, const_cast<void*>(data), dims, strides, box, element_strides,
                CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                KSEEK_FA_L2_PROMOTION == 0   ? CU_TENSOR_MAP_L2_PROMOTION_NONE
                : KSEEK_FA_L2_PROMOTION == 1 ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
                : KSEEK_FA_L2_PROMOTION == 2 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                                             : CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

// The split loop (KSEEK_FA_SPLIT_MASK_LOOP) at head_dim 128 always; at
// 64, 256 and on the D = 192 kernel for items of at least
// SplitMaskMinTiles(D) key tiles, and at 64 for every non-causal shape
// (measured: NOTES.md v3h, v3v). Where that count is above 0 the kernel
// comes with and without the split loop (kWgmmaBoth); at 0 (the D = 192
// kernel by default) only with it.
constexpr int SplitMaskMinTiles(int d) {
  return d == 64    ? KSEEK_FA_HD64_SPLIT_MASK_MIN_TILES
         : d == 192 ? KSEEK_FA_HD192_SPLIT_MASK_MIN_TILES
                    : KSEEK_FA_SPLIT_MASK_MIN_TILES;
}
template <int D>
constexpr bool kWgmmaSplitHere = (KSEEK_FA_SPLIT_MASK_LOOP & HeadDimBit(D)) != 0;
template <int D, int BN>
constexpr bool kWgmmaBoth =
    kWgmmaSplitHere<D> && D != 128 && BN == 0 && SplitMaskMinTiles(D) > 0;

// The WGMMA kernel's instance for a launch (with the split loop where
// `split` and the instance has both; kTail: the tail's shares'), its shared
// memory size set once per instance; nullptr where that is refused.
template <typename T, int D, int NC, int BN, int QB, int KD, int CL, bool kTail = false>
auto WgmmaKernel(bool split) {
  using C = WgmmaConfig<D, NC, BN, QB>;
  constexpr bool kOnly = kWgmmaSplitHere<D> && !kWgmmaBoth<D, BN>;
  const auto plain = AttentionForwardWgmma<T, D, NC, BN, QB, KD, kOnly, CL KSEEK_FA_TAIL_ARG(kTail)>;
  const auto with_split =
      AttentionForwardWgmma<T, D, NC, BN, QB, KD, true, CL KSEEK_FA_TAIL_ARG(kTail)>;
  static const cudaError_t plain_set = cudaFuncSetAttribute(
      plain, cudaFuncAttributeMaxDynamicSharedMemorySize, C::kSmemBytes);
  static const cudaError_t split_set =
      kWgmmaBoth<D, BN> ? cudaFuncSetAttribute(with_split,
                                               cudaFuncAttributeMaxDynamicSharedMemorySize,
                                               C::kSmemBytes)
                        : cudaSuccess;
  decltype(plain) none = nullptr;
  if (plain_set != cudaSuccess || split_set != cudaSuccess) return none;
  return kWgmmaBoth<D, BN> && split ? with_split : plain;
}

// The WGMMA kernel over one wave or more, no split keys.
// CL: blocks per cluster (2: KSEEK_FA_CLUSTER, whole items and an even
// number of query tiles per head, which the caller has checked).
template <typename T, int D, int NC, int BN = 0, int QB = 0, int KD = D, int CL = 1>
int LaunchWgmma(Problem p, const kseek_launch_args* args, int sms,
                int splits = 1) {
  using C = WgmmaConfig<D, NC, BN, QB>;
  const int key_tiles = (p.seqlen_k + C::kBlockN - 1) / C::kBlockN;
  p.tiles_per_split = (key_tiles + splits - 1) / splits;
  p.splits = (key_tiles + p.tiles_per_split - 1) / p.tiles_per_split;
  // With the split loop or not (kWgmmaSplitHere).
  const bool split = kWgmmaSplitHere<D> &&
                     (!kWgmmaBoth<D, BN> || p.tiles_per_split >= SplitMaskMinTiles(D) ||
                      (D == 64 && !p.causal));
  const auto kernel = WgmmaKernel<T, D, NC, BN, QB, KD, CL>(split);
  if (kernel == nullptr) {
    g_error = "the WGMMA attention kernel's shared memory does not fit";
    return 1;
  }
  // Clusters: as many as fit at once (two SMs of one GPC each; 66 on an
  // H200), asked once per SM count; where none fits, the kernel without.
  [[maybe_unused]] cudaLaunchAttribute attr[1];
  [[maybe_unused]] int fit = 0;
  if constexpr (CL == 2) {
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = 2;
    attr[0].val.clusterDim.y = 1;
    attr[0].val.clusterDim.z = 1;
    static thread_local int fit_sms = -1, fit_clusters = 0;
    if (fit_sms != sms) {
      // grid, block, dynamic shared memory, stream, attributes.
      const cudaLaunchConfig_t config = {dim3(unsigned(sms)), dim3(C::kThreads),
                                         size_t(C::kSmemBytes), nullptr, attr, 1};
      int n = 0;
      fit_clusters = cudaOccupancyMaxActiveClusters(&n, kernel, &config) == cudaSuccess ? n : 0;
      fit_sms = sms;
    }
    fit = fit_clusters;
    if (fit < 1) return LaunchWgmma<T, D, NC, BN, QB, KD, 1>(p, args, sms, splits);
  }
  const EncodeTiledFn encode = TensorMapEncoder();
  if (encode == nullptr) {
    g_error = "the driver has no cuTensorMapEncodeTiled";
    return 1;
  }
  CUtensorMap q_map, k_map, v_map;
  CUtensorMap o_map{};  // read only with TMA stores
  if ((kWgmmaTmaStores<C, D, KD> || kWgmmaTmaInV<C, D, KD>) &&
      !EncodeBshd<T>(encode, &o_map, args->tensors[3].data, p.batch,
                     p.seqlen_q, p.heads_q, p.head_dim, kRowsPerWarp)) {
    g_error = "cuTensorMapEncodeTiled rejected the tensor map of o";
    return 1;
  }
  if (!EncodeBshd<T>(encode, &q_map, args->tensors[0].data, p.batch,
                     p.seqlen_q, p.heads_q, p.head_dim, kWgRows) ||
      !EncodeBshd<T>(encode, &k_map, args->tensors[1].data, p.batch,
                     p.seqlen_k, p.heads_kv, p.head_dim, C::kBlockN) ||
      !EncodeBshd<T>(encode, &v_map, args->tensors[2].data, p.batch,
                     p.seqlen_k, p.heads_kv, p.head_dim, C::kBlockN)) {
    g_error = "cuTensorMapEncodeTiled rejected a tensor map of q, k or v";
    return 1;
  }
  p.q_tiles = (p.seqlen_q + C::kBlockM - 1) / C::kBlockM;
  if constexpr (CL == 2) p.q_tiles /= 2;  // a cluster's items: pairs of query tiles
  const int64_t items = int64_t(p.batch) * p.heads_q * p.q_tiles * p.splits;
  p.section_pairs = WgmmaSectionPairs<T, D, C::kBlockN, CL * C::kBlockM>(p, items, sms);
#if KSEEK_FA_FAST_LOCATE
  {
    const int pairs = p.batch * p.heads_q;
    p.last_section = (pairs - 1) / p.section_pairs;
    p.per_section_div = MakeFastDiv(uint32_t(p.section_pairs * p.q_tiles));
    p.width_div = MakeFastDiv(uint32_t(p.section_pairs));
    p.last_width_div = MakeFastDiv(uint32_t(pairs - p.last_section * p.section_pairs));
    p.heads_div = MakeFastDiv(uint32_t(p.heads_q));
    p.splits_div = MakeFastDiv(uint32_t(p.splits));
    p.group_div = MakeFastDiv(uint32_t(p.heads_q / p.heads_kv));
  }
#endif

  // Blocks (clusters) of a persistent grid for n items: one per SM (as
  // many clusters as fit at once), no more than the items.
  auto slots_for = [&](int64_t n) {
    const int64_t most = CL == 2 ? fit : sms;
    return n < most ? n : most;
  };

  int64_t tail_rows = 0;
  [[maybe_unused]] int64_t cluster_grid = CL == 2 ? slots_for(items) : 0;  // clusters launched
#if KSEEK_FA_TAIL_SPLIT
  p.tail_first = int(items);
  p.tail_pairs = p.tail_tiles = p.tail_share = p.tail_segs = 0;
  if constexpr (CL == 2 && (KSEEK_FA_TAIL_SPLIT & WgmmaDimBit(D)) != 0) {
    // Whole pairs for all rounds but the last one or two (none with fewer
    // pairs than clusters), then the rest's key tiles in even shares over
    // every cluster that fits: rounds - whole - share / tiles of a pair's
    // time saved, if 1% or more and KSEEK_FA_TAIL_MIN_SAVED_KEYS keys, and
    // only after KSEEK_FA_TAIL_MIN_WHOLE whole rounds.
    const int64_t clusters = fit;
    const int64_t rounds = (items + clusters - 1) / clusters;
    const int64_t whole = items >= clusters ? items / clusters - 1 : 0;
    const int64_t pairs = items - whole * clusters;
    const int64_t share = (pairs * key_tiles + clusters - 1) / clusters;
    const int64_t saved = (rounds - whole) * key_tiles - share;  // in key tiles
    if (!p.causal && p.splits == 1 && key_tiles >= KSEEK_FA_TAIL_MIN_TILES &&
        whole >= KSEEK_FA_TAIL_MIN_WHOLE &&
        saved * 100 >= rounds * key_tiles &&
        saved * C::kBlockN >= KSEEK_FA_TAIL_MIN_SAVED_KEYS &&
        pairs * 2 * C::kConsumers * 4 <= kTailCounts &&
        clusters * 2 * 2 * C::kBlockM * D <= kTailOFloats) {
      p.tail_first = int(whole * clusters);
      p.tail_pairs = int(pairs);
      p.tail_tiles = key_tiles;
      p.tail_share = int(share);
      p.tail_segs = int((share + key_tiles - 1) / key_tiles + 1);
      tail_rows = clusters * 2 * 2 * C::kBlockM;  // slots 2c and 2c + 1 of a pair's rows
      cluster_grid = clusters;
    }
  }
#endif
  [[maybe_unused]] auto launched = kernel;  // the tail's shares' instance where taken
#if KSEEK_FA_TAIL_SPLIT
  if constexpr (CL == 2 && (KSEEK_FA_TAIL_SPLIT & WgmmaDimBit(D)) != 0) {
    if (tail_rows > 0) launched = WgmmaKernel<T, D, NC, BN, QB, KD, CL, true>(split);
    if (launched == nullptr) {
      g_error = "the WGMMA attention kernel's shared memory does not fit";
      return 1;
    }
  }
#endif
  cudaStream_t stream = static_cast<cudaStream_t>(args->stream);
  CallScratch scratch(stream);
  // (Clusters take pairs in a static order, but causal ones from a queue
  // with KSEEK_FA_CAUSAL_CLUSTER_QUEUE.)
  const bool queue = CL != 2 || (C::kMailbox && p.causal);
  if (!scratch.Bind(p, queue, int64_t(p.batch) * p.heads_q * p.seqlen_q, D, tail_rows))
    return 1;
  T* o = static_cast<T*>(args->tensors[3].data);
  float* lse = static_cast<float*>(args->tensors[4].data);
#if KSEEK_FA_SC_K_GLOBAL
  Scratch wgmma_scratch = scratch.get();
  wgmma_scratch.k = args->tensors[1].data;
#else
  const Scratch& wgmma_scratch = scratch.get();
#endif
  if constexpr (CL == 2) {
    // Persistent clusters; each takes pairs in a static order (causal
    // ones from a queue with KSEEK_FA_CAUSAL_CLUSTER_QUEUE).
    const int clusters = int(cluster_grid);
    // grid, block, dynamic shared memory, stream, attributes.
    const cudaLaunchConfig_t config = {dim3(unsigned(2 * clusters)), dim3(C::kThreads),
                                       size_t(C::kSmemBytes), stream, attr, 1};
#if KSEEK_FA_TAIL_SPLIT && KSEEK_FA_TAIL_LAUNCHES
    if (kTailLaunches<D> && launched != kernel) {
      // The whole pairs in the instance without the shares, then the
      // shares' segments in theirs, launched as a programmatic dependent
      // (it starts as the first grid's clusters leave their SMs); with
      // no whole pair the shares' grid alone, an ordinary launch.
      const bool whole_pairs = p.tail_first > 0;
      if (whole_pairs)
        cudaLaunchKernelEx(&config, kernel, p, q_map, k_map, v_map, o, lse, o_map, wgmma_scratch);
      cudaLaunchAttribute tail_attr[2] = {attr[0], DependentLaunch()};
      cudaLaunchConfig_t tail_config = config;  // the same grid, and the dependency
      tail_config.attrs = tail_attr;
      tail_config.numAttrs = whole_pairs ? 2 : 1;
      cudaLaunchKernelEx(&tail_config, launched, p, q_map, k_map, v_map, o, lse, o_map,
                         wgmma_scratch);
    } else
#endif
    cudaLaunchKernelEx(&config, launched, p, q_map, k_map, v_map, o, lse, o_map, wgmma_scratch);
  } else {
    // Persistent: one block per SM; blocks take items from a queue.
    const int grid = int(slots_for(items));
    kernel<<<unsigned(grid), C::kThreads, C::kSmemBytes, stream>>>(
        p, q_map, k_map, v_map, o, lse, o_map, wgmma_scratch);
  }
  if (p.splits > 1)
    LaunchCombine<T, D>(p, o, lse, scratch.get(), stream,
                        (kWgmmaDependentCombine & WgmmaDimBit(D)) != 0);
  if (cudaGetLastError() != cudaSuccess) {
    g_error = "WGMMA attention kernel launch failed";
    return 1;
  }
  return 0;
}

// Three consumers (192-row items) at head_dim 64 when there are items for
// at least two waves, at least one full item per sequence, and the shape
// is not a short causal one (seqlen_q under 2048 and not much shorter than
// seqlen_k: there the uneven causal items and a partly empty last item
// cost more than the third consumer gains). Measured side by side on 23
// head_dim 64 shapes, and sequences under 192 rows on the whole suite
// (NOTES.md v3).
bool ThreeConsumers(const Problem& p, int sms) {
#if KSEEK_FA_HD64_CONSUMERS == 2
  return false;
#elif KSEEK_FA_HD64_CONSUMERS == 3
  return true;
#else
  constexpr int kRows = WgmmaConfig<64, 3>::kBlockM;
  constexpr int kRows2 = WgmmaConfig<64, 2>::kBlockM;
  const int64_t pairs = int64_t(p.batch) * p.heads_q;
  const int64_t items = pairs * ((p.seqlen_q + kRows - 1) / kRows);
  const int64_t items2 = pairs * ((p.seqlen_q + kRows2 - 1) / kRows2);
  const bool short_causal = p.causal && p.seqlen_q < 2048 &&
                            int64_t(4) * p.seqlen_q > p.seqlen_k;
  if (p.seqlen_q < kRows || short_causal) return false;
  if (items >= int64_t(2) * sms)
    return (p.seqlen_q + kRows - 1) / kRows * kRows * 100 <=
           (p.seqlen_q + kRows2 - 1) / kRows2 * kRows2 * (100 + KSEEK_FA_HD64_THREE_PAD_PCT);
  // Few items: three consumers when their items take clearly fewer rows
  // of waves (waves x rows per item) than two consumers' items, e.g. 128
  // items of 192 rows in one wave instead of 192 of 128 in two
  // (prefill_q333_k4097_hd64: +51%, variants call 22).
  const int64_t waves = (items + sms - 1) / sms;
  const int64_t waves2 = (items2 + sms - 1) / sms;
  return 10 * waves * kRows < 9 * waves2 * kRows2;
#endif
}

// seqlen_k rounded up to whole kN-key tiles.
int64_t PaddedKeys(const Problem& p, int kN) {
  return int64_t((p.seqlen_k + kN - 1) / kN) * kN;
}
// Whether kN-key tiles pad seqlen_k to at most 5% more keys than 128-key
// tiles do (not for short sequences such as 65 keys: 176 computed instead
// of 128).
bool PadsLittle(const Problem& p, int kN) {
  return PaddedKeys(p, kN) * 20 <= PaddedKeys(p, 128) * 21;
}
// Wide key tiles (kN keys instead of 128) at head_dim 128 without causal
// masking, where they pad little.
bool WideKeyTiles(const Problem& p, int kN) { return !p.causal && PadsLittle(p, kN); }

// Whether kWide-key tiles pad seqlen_k to at most 2% more keys than
// kNarrow-key tiles do (KSEEK_FA_HD128_FULL_Q1_FROM).
bool WideOverQ2(const Problem& p, int kWide, int kNarrow) {
  return PaddedKeys(p, kWide) * 50 <= PaddedKeys(p, kNarrow) * 51;
}

// The same with causal masking (KSEEK_FA_HD128_CAUSAL_WIDE_KEYS): where the
// mean item sees at least that many keys.
bool CausalWideKeyTiles(const Problem& p, int kN) {
  const int64_t mean_keys = int64_t(p.seqlen_k) - p.seqlen_q / 2;
  return p.causal && mean_keys >= KSEEK_FA_HD128_CAUSAL_WIDE_KEYS && PadsLittle(p, kN);
}

// The WGMMA kernel on Hopper when its blocks (one per SM) fill at least
// 80% of a wave, or with seqlen_q >= 128 split keys or whole items as
// WgmmaSplits estimates; the mma.sync kernel, which can split keys,
// otherwise and on other architectures.
template <typename T, int D>
int Launch(Problem p, const kseek_launch_args* args) {
  int device = 0, sms = 0, major = 0;
  if (cudaGetDevice(&device) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) !=
          cudaSuccess ||
      cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
                             device) != cudaSuccess) {
    g_error = "cannot query the device's SM count and compute capability";
    return 1;
  }
  p.q_tiles = (p.seqlen_q + kBlockM - 1) / kBlockM;
  const int64_t blocks = int64_t(p.batch) * p.heads_q * p.q_tiles;
  if (blocks > INT_MAX) {
    g_error = "too many query tiles: batch * heads_q * seqlen_q / 128 must fit in int";
    return 1;
  }
  // GQA decode (a few queries, heads sharing a K/V head): the mma.sync
  // kernel with the heads packed into its rows reads each K/V head once
  // and splits the keys; the WGMMA kernel's 128-row items would hold at
  // most 16 rows of one query head each and read K/V once per query head.
  const bool gqa_decode = (KSEEK_FA_MMA_PACK_GQA && p.heads_q > p.heads_kv &&
                           p.seqlen_q <= KSEEK_FA_GQA_DECODE_MAX_Q) ||
                          (KSEEK_FA_DECODE_KERNEL == 2 &&
                           p.seqlen_q <= kDecodeRows &&
                           (D < 256 || p.seqlen_k >= kDecodeWarps * kDecodeKeys));
  // head_dim at most 3/4 of D (80 and 96 on D = 128, 160 and 192 on 256):
  // S over the first 3/4 of the columns only (the rest are zeros).
  constexpr int kNarrowD = D > kMinHeadDim ? D * 3 / 4 : D;
  const bool narrow = KSEEK_FA_NARROW_SCORES && kNarrowD < D &&
                      p.head_dim <= kNarrowD;
  // head_dim 136-192 on the D = 192 kernel (KSEEK_FA_D192).
  const bool on192 = KSEEK_FA_D192 && D == 256 && p.head_dim <= 192;
  if (major == 9 && D <= KSEEK_FA_WGMMA_MAX_HEAD_DIM && !gqa_decode) {
    bool whole = blocks * 5 >= int64_t(sms) * 4;
#if KSEEK_FA_WGMMA_SPLIT_KEYS
    // Few query tiles of at least 128 rows: split the keys in the WGMMA
    // kernel when that pays (decode-like shapes stay on the mma.sync
    // kernel, whose 16-row warps waste less on them).
    if (!whole && p.seqlen_q >= kBlockM) {
      int block_n = WgmmaConfig<D>::kBlockN;
      if constexpr (D == 256 && KSEEK_FA_D192)
        if (on192) block_n = WgmmaConfig<D / 4 * 3>::kBlockN;  // D = 192
      const int key_tiles = (p.seqlen_k + block_n - 1) / block_n;
      const int64_t rows_total = blocks * kBlockM;
      const int splits =
          KSEEK_FA_SPLIT_COST
              ? WgmmaSplits(blocks, sms, key_tiles, rows_total, block_n,
                            on192 ? 192 : D)
              : ChooseSplits(blocks, sms, key_tiles, rows_total, D);
      if (splits > 1 && (KSEEK_FA_SPLIT_COST || blocks * splits * 5 >= int64_t(sms) * 4)) {
        if constexpr (D == 256 && KSEEK_FA_D192) {
          if (on192) return LaunchWgmma<T, D / 4 * 3, 2>(p, args, sms, splits);
        } else if (narrow) {
          return LaunchWgmma<T, D, 2, 0, 0, kNarrowD>(p, args, sms, splits);
        }
        return LaunchWgmma<T, D, 2>(p, args, sms, splits);
      }
      // Whole items beat any split (where one was possible: else, as
      // before, the mma.sync kernel).
      if (KSEEK_FA_SPLIT_COST && key_tiles >= 2 * kMinTilesPerSplit) whole = true;
    }
#endif
    if (whole) {
      // Clusters of two blocks (KSEEK_FA_CLUSTER) on head_dim 128's kernels
      // (but the narrow ones: head_dim 80 and 96) and at head_dim 136-192
      // and 193-256: an even number of query tiles per head, and no more
      // queries than keys; with causal masking only on the kernels of
      // KSEEK_FA_CAUSAL_CLUSTER (`bit`: the kernel's, WgmmaDimBit). `cluster`:
      // D's own kernels (not the narrow ones, which the D = 192 kernel
      // takes at 256).
      constexpr bool kClusterHere = (KSEEK_FA_CLUSTER & HeadDimBit(D)) != 0 && D >= 128;
      [[maybe_unused]] auto cluster_shape = [&p](int bit) {
        return (!p.causal || ((KSEEK_FA_CAUSAL_CLUSTER & bit) != 0 &&
                              int64_t(p.seqlen_k) - p.seqlen_q / 2 >=
                                  KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS)) &&
               p.seqlen_q <= p.seqlen_k && (p.seqlen_q + kBlockM - 1) / kBlockM % 2 == 0;
      };
      [[maybe_unused]] const bool cluster =
          kClusterHere && !narrow && cluster_shape(HeadDimBit(D));
      if constexpr (D == 64) {
        if (ThreeConsumers(p, sms)) return LaunchWgmma<T, D, 3>(p, args, sms);
      }
      if constexpr (D <= 128 && KSEEK_FA_SHORT_KEYS) {
        // Keys that fit one short tile: one 64- or 80-key tile per item.
        if (p.seqlen_k <= 64) return LaunchWgmma<T, D, 2, 64>(p, args, sms);
        if (p.seqlen_k <= 80) return LaunchWgmma<T, D, 2, 80>(p, args, sms);
      }
      if constexpr (D == 128 && KSEEK_FA_HD128_FULL_Q2_UPTO > 0) {
        if (!p.causal && !narrow && p.seqlen_k <= KSEEK_FA_HD128_FULL_Q2_UPTO &&
            !(KSEEK_FA_HD128_FULL_Q1_FROM > 0 && p.seqlen_k > KSEEK_FA_HD128_FULL_Q1_FROM &&
              WideKeyTiles(p, KSEEK_FA_HD128_FULL_BLOCK_N) &&
              WideOverQ2(p, KSEEK_FA_HD128_FULL_BLOCK_N, KSEEK_FA_HD128_Q2_BLOCK_N))) {
          if constexpr (KSEEK_FA_HD128_Q2_BLOCK_N != 128) {
            if (WideKeyTiles(p, KSEEK_FA_HD128_Q2_BLOCK_N)) {
              if constexpr (kClusterHere)
                if (cluster)
                  return LaunchWgmma<T, D, 2, KSEEK_FA_HD128_Q2_BLOCK_N, 2, D, 2>(p, args, sms);
              return LaunchWgmma<T, D, 2, KSEEK_FA_HD128_Q2_BLOCK_N, 2>(p, args, sms);
            }
          }
          if constexpr (kClusterHere)
            if (cluster) return LaunchWgmma<T, D, 2, 128, 2, D, 2>(p, args, sms);
          return LaunchWgmma<T, D, 2, 128, 2>(p, args, sms);
        }
      }
      if constexpr (D == 128 && KSEEK_FA_HD128_FULL_BLOCK_N != 128) {
        if (WideKeyTiles(p, KSEEK_FA_HD128_FULL_BLOCK_N)) {
          if (narrow)
            return LaunchWgmma<T, D, 2, KSEEK_FA_HD128_FULL_BLOCK_N, 0, kNarrowD>(
                p, args, sms);
          if constexpr (kClusterHere)
            if (cluster)
              return LaunchWgmma<T, D, 2, KSEEK_FA_HD128_FULL_BLOCK_N, 0, D, 2>(p, args, sms);
          return LaunchWgmma<T, D, 2, KSEEK_FA_HD128_FULL_BLOCK_N>(p, args, sms);
        }
      }
      if constexpr (D == 128 && KSEEK_FA_HD128_CAUSAL_Q2_UPTO > 0) {
        if (p.causal && p.seqlen_k <= KSEEK_FA_HD128_CAUSAL_Q2_UPTO) {
          if constexpr (kClusterHere)
            if (cluster) return LaunchWgmma<T, D, 2, 128, 2, D, 2>(p, args, sms);
          return LaunchWgmma<T, D, 2, 128, 2>(p, args, sms);
        }
      }
      if constexpr (D == 128 && KSEEK_FA_HD128_CAUSAL_WIDE_KEYS > 0 &&
                    KSEEK_FA_HD128_FULL_BLOCK_N != 128) {
        if (p.causal && !narrow && CausalWideKeyTiles(p, KSEEK_FA_HD128_FULL_BLOCK_N)) {
          if constexpr (kClusterHere)
            if (cluster)
              return LaunchWgmma<T, D, 2, KSEEK_FA_HD128_FULL_BLOCK_N, 0, D, 2>(p, args, sms);
          return LaunchWgmma<T, D, 2, KSEEK_FA_HD128_FULL_BLOCK_N>(p, args, sms);
        }
      }
      if constexpr (D == 128 && kClusterHere && (KSEEK_FA_CAUSAL_CLUSTER & 2) != 0 &&
                    (KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS < KSEEK_FA_HD128_CAUSAL_WIDE_KEYS ||
                     KSEEK_FA_HD128_CAUSAL_WIDE_KEYS == 0 ||
                     KSEEK_FA_HD128_FULL_BLOCK_N == 128)) {
        // The causal items' 128-key tiles in clusters (an instance of their
        // own; not where KSEEK_FA_CAUSAL_CLUSTER_MIN_KEYS leaves them to
        // the 176-key tiles).
        if (p.causal && cluster) return LaunchWgmma<T, D, 2, 0, 0, D, 2>(p, args, sms);
      }
      if constexpr (D == 256 && KSEEK_FA_D192) {
        // Keys that fit one 80-key tile: 80 (many_short_b512_s32_hd160:
        // 112-key tiles measured 0.89x of D = 256's 80).
        if (on192 && p.seqlen_k <= 80 && KSEEK_FA_HD192_BLOCK_N > 80)
          return LaunchWgmma<T, D / 4 * 3, 2, 80>(p, args, sms);
        if constexpr ((KSEEK_FA_CLUSTER & WgmmaDimBit(D / 4 * 3)) != 0)
          if (on192 && cluster_shape(WgmmaDimBit(D / 4 * 3)))
            return LaunchWgmma<T, D / 4 * 3, 2, 0, 0, D / 4 * 3, 2>(p, args, sms);
        if (on192) return LaunchWgmma<T, D / 4 * 3, 2>(p, args, sms);
      } else if (narrow) {  // (D = 256 with KSEEK_FA_D192: on192 is all of narrow)
        return LaunchWgmma<T, D, 2, 0, 0, kNarrowD>(p, args, sms);
      }
      if constexpr (D == 256 && KSEEK_FA_SHORT_KEYS) {
        // Keys that fit one 64-key tile: one 64-key tile per item instead
        // of an 80-key one (many_short s8 and s32: +6-13%). Longer keys
        // stay on 80 even where 64 would pad less (s512: 560 keys computed
        // against 512, yet 64-key tiles 13% slower; NOTES.md v4c). Such
        // items are never clustered (one query tile per head).
        if (p.seqlen_k <= 64) return LaunchWgmma<T, D, 2, 64>(p, args, sms);
      }
      if constexpr (kClusterHere && D == 256)
        if (cluster) return LaunchWgmma<T, D, 2, 0, 0, D, 2>(p, args, sms);
      return LaunchWgmma<T, D, 2>(p, args, sms);
    }
  }
  return LaunchMma<T, D>(p, args, sms);
}

template <typename T>
int LaunchForDim(int head_dim, const Problem& p,
                 const kseek_launch_args* args) {
  // Compiled for D = 64, 128 and 256: a head_dim runs on the next D up
  // (loads zero-fill its columns past head_dim; stores skip them).
  if (head_dim >= 64 && head_dim <= 256 && head_dim % 8 == 0) {
    if (head_dim <= 64) return Launch<T, 64>(p, args);
    if (head_dim <= 128) return Launch<T, 128>(p, args);
    return Launch<T, 256>(p, args);
  }
  g_error = "head_dim must be a multiple of 8 from 64 to 256";
  return 1;
}

}  // namespace

#if KSEEK_FA_TRACE
// The item trace's host side (KSEEK_FA_TRACE; bench/item_trace.py): its
// layout, a reset before a traced call, and a copy of every record. Each
// returns 0 or the CUDA error's code.
extern "C" KSEEK_EXPORT int kseek_fa_trace_layout(int* blocks, int* rounds, int* words) {
  *blocks = kTraceBlocks;
  *rounds = kTraceRounds;
  *words = kTraceWords;
  return 0;
}
extern "C" KSEEK_EXPORT int kseek_fa_trace_reset(void) {
  void* at = nullptr;
  cudaError_t e = cudaGetSymbolAddress(&at, g_trace);
  if (e == cudaSuccess) e = cudaMemset(at, 0, sizeof(g_trace));
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  return int(e);
}
extern "C" KSEEK_EXPORT int kseek_fa_trace_read(unsigned long long* out) {
  cudaError_t e = cudaDeviceSynchronize();
  if (e == cudaSuccess) e = cudaMemcpyFromSymbol(out, g_trace, sizeof(g_trace));
  return int(e);
}
#endif

extern "C" KSEEK_EXPORT const char* kseek_error_message(void) {
  return g_error;
}

extern "C" KSEEK_EXPORT int kseek_launch(const kseek_launch_args* args) {
  if (args->abi_version != KSEEK_ABI_VERSION || args->num_tensors != 5) {
    g_error = "expected ABI version 1 and tensors q, k, v, o, lse";
    return 1;
  }
  for (int i = 0; i < 4; ++i) {
    if (reinterpret_cast<uintptr_t>(args->tensors[i].data) % 16 != 0) {
      g_error = "q, k, v and o must be 16-byte aligned";
      return 1;
    }
  }
  Problem p = {};
  p.batch = int(kseek_param_get(args, "batch", 0));
  p.seqlen_q = int(kseek_param_get(args, "seqlen_q", 0));
  p.seqlen_k = int(kseek_param_get(args, "seqlen_k", 0));
  p.heads_q = int(kseek_param_get(args, "heads_q", 0));
  p.heads_kv = int(kseek_param_get(args, "heads_kv", 0));
  p.causal = int(kseek_param_get(args, "causal", 0));
  const int head_dim = int(kseek_param_get(args, "head_dim", 0));
  const int64_t dtype = kseek_param_get(args, "dtype", -1);
  if (p.batch < 1 || p.seqlen_q < 1 || p.seqlen_k < 1 || p.heads_kv < 1 ||
      p.heads_q < 1 || p.heads_q % p.heads_kv != 0) {
    g_error = "bad shape: need positive sizes and heads_kv dividing heads_q";
    return 1;
  }
  p.head_dim = head_dim;
  p.pack = 1;
  p.scale_log2 = kLog2e / sqrtf(float(head_dim));
  if (dtype == KSEEK_BF16) return LaunchForDim<__nv_bfloat16>(head_dim, p, args);
  if (dtype == KSEEK_F16) return LaunchForDim<__half>(head_dim, p, args);
  g_error = "dtype must be bf16 or f16";
  return 1;
}
