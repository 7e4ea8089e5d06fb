// Verdict <-> protocol message conversions (convert.h).
#include "proto/convert.h"

namespace kseek {


v1::TimeStats ToProto(const TimeStats& t) {
  v1::TimeStats p;
  p.set_median(t.median);
  p.set_mean(t.mean);
  p.set_stderr(t.stderr_ms);
  p.set_min(t.min);
  p.set_max(t.max);
  p.set_n(t.n);
  return p;
}

TimeStats FromProto(const v1::TimeStats& p) {
  TimeStats t;
  t.median = p.median();
  t.mean = p.mean();
  t.stderr_ms = p.stderr();
  t.min = p.min();
  t.max = p.max();
  t.n = p.n();
  return t;
}

v1::ScenarioResult ToProto(const ScenarioResult& s) {
  v1::ScenarioResult p;
  p.set_index(s.index);
  p.set_name(s.name);
  p.set_params_json(s.params.is_null() ? "{}" : s.params.dump());
  p.set_status(StatusName(s.status));
  p.set_error(s.error);
  for (const auto& o : s.outputs) {
    v1::OutputError* e = p.add_outputs();
    e->set_tensor(o.tensor);
    e->set_rel_l2(o.rel_l2);
    e->set_max_abs(o.max_abs);
    e->set_within(o.within);
  }
  p.set_rel_l2(s.rel_l2);
  p.set_max_abs(s.max_abs);
  if (s.time) *p.mutable_time() = ToProto(*s.time);
  if (s.baseline) *p.mutable_baseline() = ToProto(*s.baseline);
  if (s.speedup) p.set_speedup(*s.speedup);
  if (s.tflops) p.set_tflops(*s.tflops);
  if (s.gbps) p.set_gbps(*s.gbps);
  p.set_flag(s.flag);
  return p;
}

ScenarioResult FromProto(const v1::ScenarioResult& p) {
  ScenarioResult s;
  s.index = p.index();
  s.name = p.name();
  s.params = nlohmann::json::parse(p.params_json(), nullptr, /*allow_exceptions=*/false);
  if (s.params.is_discarded()) s.params = nlohmann::json::object();
  auto status = ParseStatus(p.status());
  s.status = status.ok() ? *status : ScenarioStatus::kCrash;
  s.error = status.ok() ? p.error() : "unknown status '" + p.status() + "': " + p.error();
  for (const auto& e : p.outputs()) s.outputs.push_back({e.tensor(), e.rel_l2(), e.max_abs(), e.within()});
  s.rel_l2 = p.rel_l2();
  s.max_abs = p.max_abs();
  if (p.has_time()) s.time = FromProto(p.time());
  if (p.has_baseline()) s.baseline = FromProto(p.baseline());
  if (p.has_speedup()) s.speedup = p.speedup();
  if (p.has_tflops()) s.tflops = p.tflops();
  if (p.has_gbps()) s.gbps = p.gbps();
  s.flag = p.flag();
  return s;
}

v1::Verdict ToProto(const Verdict& v) {
  v1::Verdict p;
  p.set_task(v.task);
  p.set_target(v.target);
  v1::DeviceInfo* d = p.mutable_device();
  d->set_name(v.device.name);
  d->set_cc_major(v.device.cc_major);
  d->set_cc_minor(v.device.cc_minor);
  d->set_sm_count(v.device.sm_count);
  d->set_memory_bytes(v.device.memory_bytes);
  d->set_l2_bytes(v.device.l2_bytes);
  d->set_sm_clock_mhz(v.device.sm_clock_mhz);
  d->set_mem_bandwidth_gbps(v.device.mem_bandwidth_gbps);
  d->set_driver(v.device.driver);
  p.set_seed(v.seed);
  v1::CompileInfo* c = p.mutable_compile();
  c->set_ok(v.compile.ok);
  c->set_cached(v.compile.cached);
  c->set_registers(v.compile.registers);
  c->set_smem_bytes(v.compile.smem_bytes);
  c->set_spill_bytes(v.compile.spill_bytes);
  c->set_stack_bytes(v.compile.stack_bytes);
  c->set_command(v.compile.command);
  c->set_log(v.compile.log);
  c->set_seconds(v.compile.seconds);
  for (const auto& s : v.scenarios) *p.add_scenarios() = ToProto(s);
  p.set_all_correct(v.all_correct);
  if (v.geomean_speedup) p.set_geomean_speedup(*v.geomean_speedup);
  p.set_goal_speedup(v.goal_speedup);
  p.set_goal_met(v.goal_met);
  p.set_error(v.error);
  return p;
}

Verdict FromProto(const v1::Verdict& p) {
  Verdict v;
  v.task = p.task();
  v.target = p.target();
  const v1::DeviceInfo& d = p.device();
  v.device.name = d.name();
  v.device.cc_major = d.cc_major();
  v.device.cc_minor = d.cc_minor();
  v.device.sm_count = d.sm_count();
  v.device.memory_bytes = d.memory_bytes();
  v.device.l2_bytes = d.l2_bytes();
  v.device.sm_clock_mhz = d.sm_clock_mhz();
  v.device.mem_bandwidth_gbps = d.mem_bandwidth_gbps();
  v.device.driver = d.driver();
  v.seed = p.seed();
  const v1::CompileInfo& c = p.compile();
  v.compile.ok = c.ok();
  v.compile.cached = c.cached();
  v.compile.registers = c.registers();
  v.compile.smem_bytes = c.smem_bytes();
  v.compile.spill_bytes = c.spill_bytes();
  v.compile.stack_bytes = c.stack_bytes();
  v.compile.command = c.command();
  v.compile.log = c.log();
  v.compile.seconds = c.seconds();
  for (const auto& s : p.scenarios()) v.scenarios.push_back(FromProto(s));
  v.all_correct = p.all_correct();
  if (p.has_geomean_speedup()) v.geomean_speedup = p.geomean_speedup();
  v.goal_speedup = p.goal_speedup();
  v.goal_met = p.goal_met();
  v.error = p.error();
  return v;
}

}  // namespace kseek
