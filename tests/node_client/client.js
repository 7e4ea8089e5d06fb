// A KernelSeek client in Node.js, written from proto/kernelseek/v1/*.proto
// and their comments alone: the .proto files are loaded at run time (no
// generated code). It lists tasks, submits an evaluation of a task named
// from the coordinator's catalog, follows its stream to the verdict,
// watches and gets it again, lists evaluations, workers and sessions (a
// state filter outside Session.state's set refused), and submits
// once more with the task's files packed by the rule the TaskFiles comment
// states; one line per step on stdout, exit 1 on the first failure.
//
// Environment: KSEEK_COORDINATOR (HOST:PORT), KSEEK_TOKEN, KSEEK_PROTO_DIR
// (the folder holding kernelseek/v1/), KSEEK_TASK_DIR (the softmax task
// folder), KSEEK_KERNEL (a host kernel of it), and KSEEK_TLS_CA (a PEM
// file: TLS; unset: plaintext).
'use strict';

const fs = require('fs');
const path = require('path');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

function env(name) {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

const protoDir = env('KSEEK_PROTO_DIR');
const definition = protoLoader.loadSync(path.join(protoDir, 'kernelseek/v1/coordinator.proto'), {
  includeDirs: [protoDir],
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
});
const v1 = grpc.loadPackageDefinition(definition).kernelseek.v1;

const ca = process.env.KSEEK_TLS_CA;
const credentials = ca ? grpc.credentials.createSsl(fs.readFileSync(ca)) : grpc.credentials.createInsecure();
const client = new v1.Coordinator(env('KSEEK_COORDINATOR'), credentials);

function metadata() {
  const m = new grpc.Metadata();
  m.set('authorization', `Bearer ${env('KSEEK_TOKEN')}`);
  return m;
}
function deadline(seconds) {
  return { deadline: new Date(Date.now() + seconds * 1000) };
}
function unary(method, request) {
  return new Promise((resolve, reject) => {
    client[method](request, metadata(), deadline(30), (error, response) => {
      if (error) reject(new Error(`${method}: ${error.code} ${error.details}`));
      else resolve(response);
    });
  });
}
// Reads a stream of EvaluationEvents to its end; the events, in order.
function events(call, what) {
  return new Promise((resolve, reject) => {
    const seen = [];
    call.on('data', (event) => seen.push(event));
    call.on('error', (error) => reject(new Error(`${what}: ${error.code} ${error.details}`)));
    call.on('end', () => resolve(seen));
  });
}

// The task folder as TaskFiles, following the comment on the message:
// task.json, every file named under "sources" for every family, and the
// headers beside task.json.
function packTask(dir) {
  const files = { 'task.json': fs.readFileSync(path.join(dir, 'task.json')) };
  const task = JSON.parse(files['task.json']);
  for (const family of Object.values(task.sources)) {
    for (const name of [family.reference, family.baseline, ...(family.kernels || [])]) {
      if (name) files[name] = fs.readFileSync(path.join(dir, name));
    }
  }
  for (const name of fs.readdirSync(dir)) {
    if (/\.(h|cuh|hpp|inc)$/.test(name)) files[name] = fs.readFileSync(path.join(dir, name));
  }
  return { files };
}

// Submits `request` and reads its stream; the evaluation id and its
// events' kinds, once it ended with an all-correct verdict.
async function submitToVerdict(request) {
  const submitted = await events(client.SubmitEvaluation(request, metadata(), deadline(300)), 'SubmitEvaluation');
  const kinds = submitted.map((e) => e.event);
  const last = submitted[submitted.length - 1];
  if (kinds[0] !== 'accepted' || !last || last.event !== 'verdict') {
    throw new Error(`SubmitEvaluation: events ${kinds.join(',')}${last && last.failed ? `: ${last.failed.error}` : ''}`);
  }
  if (!last.verdict.all_correct) throw new Error(`SubmitEvaluation: verdict not all correct: ${last.verdict.error}`);
  return { id: submitted[0].evaluation_id, kinds };
}

async function main() {
  const transport = ca ? 'tls' : 'plaintext';
  const tasks = await unary('ListTasks', {});
  const softmax = tasks.tasks.find((t) => t.name === 'softmax');
  if (!softmax || !softmax.targets.includes('host')) throw new Error('ListTasks: no softmax task for host');
  console.log(`${transport} ListTasks: ${tasks.tasks.map((t) => t.name).join(', ')}`);

  const request = {
    task_name: 'softmax',
    target: 'host',
    kernel_source: fs.readFileSync(env('KSEEK_KERNEL')),
    kernel_name: path.basename(env('KSEEK_KERNEL')),
    scenario_names: ['r1_c1_f32_host'],
    timing: { disabled: true },
  };
  const { id, kinds } = await submitToVerdict(request);
  console.log(`${transport} SubmitEvaluation: ${id}: ${kinds.join(' ')}; all correct`);

  const watched = await events(client.WatchEvaluation({ evaluation_id: id }, metadata(), deadline(60)), 'WatchEvaluation');
  if (watched.length !== 1 || watched[0].event !== 'verdict') {
    throw new Error(`WatchEvaluation: events ${watched.map((e) => e.event).join(',')}`);
  }
  console.log(`${transport} WatchEvaluation: ${id}: verdict`);

  const got = await unary('GetEvaluation', { evaluation_id: id });
  if (got.state !== 'done' || got.task !== 'softmax') throw new Error(`GetEvaluation: ${got.state} ${got.task}`);
  console.log(`${transport} GetEvaluation: ${id}: ${got.state}, ${got.scenarios_done}/${got.scenarios_total} scenarios`);

  const listed = await unary('ListEvaluations', { limit: 10 });
  if (!listed.evaluations.some((e) => e.evaluation_id === id)) throw new Error(`ListEvaluations: ${id} missing`);
  console.log(`${transport} ListEvaluations: ${listed.evaluations.length} evaluation(s), ${id} among them`);

  const workers = await unary('ListWorkers', {});
  const healthy = workers.workers.filter((w) => w.healthy && w.info.target === 'host').length;
  if (healthy < 1) throw new Error('ListWorkers: no healthy host worker');
  console.log(`${transport} ListWorkers: ${healthy} healthy host worker(s)`);

  // Session.state is a closed set the proto lists ("Values: ..."); a filter
  // outside it is refused naming the set.
  const states = ['created', 'running', 'verifying', 'succeeded', 'failed', 'cancelled', 'budget_spent'];
  const sessions = await unary('ListSessions', { state: 'running' });
  for (const s of sessions.sessions) {
    if (!states.includes(s.state)) throw new Error(`ListSessions: state ${s.state} is not in the proto's set`);
  }
  const refused = await unary('ListSessions', { state: 'done' }).then(() => null, (error) => error.message);
  const expected = `ListSessions: ${grpc.status.INVALID_ARGUMENT} state: "done" is not one of ${states.join(', ')}`;
  if (refused !== expected) throw new Error(`ListSessions with state "done": ${refused || 'accepted'}`);
  console.log(`${transport} ListSessions: ${sessions.sessions.length} running; a state outside the set refused`);

  const packed = { ...request, task_name: '', task: packTask(env('KSEEK_TASK_DIR')) };
  const again = await submitToVerdict(packed);
  console.log(`${transport} SubmitEvaluation with packed files (${Object.keys(packed.task.files).length}): ` +
              `${again.id}: all correct`);
}

main().then(
  () => process.exit(0),
  (error) => {
    console.error(`node client: ${error.message}`);
    process.exit(1);
  },
);
