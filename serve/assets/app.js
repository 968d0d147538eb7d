// The workbench page: pick a scenario, set its parameters, run, compare
// overlaid runs, download a run's CSV, sweep a grid. It uses only the
// server's API (api.js); the URL holds the scenario and the values set
// (state.js).

import * as api from "./api.js";
import * as plots from "./plots.js";
import * as state from "./state.js";

const $ = (id) => document.getElementById(id);

// What tests read: the runs, what the charts plot, the last run's timing.
const page = {
  scenario: null, // the description of the chosen scenario
  runs: [], // {label, set, columns, header, events, stats}
  extra: [], // plot specs added on the page
  runCount: 0,
  lastRunMs: null, // from the click on Run to the curves drawn
  lastServerMs: null,
  error: null,
  busy: false,
  plotted: plots.plotted,
};
window.__nonsmooth = page;

function status(text, error = false) {
  $("status").textContent = text;
  $("status").className = error ? "error" : "";
  page.error = error ? text : null;
}

// Values of the form that differ from the defaults.
function changed() {
  const set = {};
  for (const p of page.scenario.parameters) {
    const v = $("p-" + p.name).value.trim();
    if (v !== "" && v !== p.default) set[p.name] = v;
  }
  return set;
}

function slider(p, input) {
  const v = p.value;
  const [lo, hi] = v > 0 ? [0, 2 * v] : v < 0 ? [2 * v, 0] : [-1, 1];
  const range = document.createElement("input");
  range.type = "range";
  range.min = lo;
  range.max = hi;
  range.step = (hi - lo) / 200;
  range.value = Number(input.value);
  range.addEventListener("input", () => (input.value = String(Number(range.value))));
  range.addEventListener("change", () => $("auto").checked && runNow());
  input.addEventListener("input", () => {
    const x = Number(input.value);
    if (Number.isFinite(x)) range.value = x;
  });
  return range;
}

function buildForm(d, set) {
  const form = $("params");
  form.replaceChildren();
  for (const p of d.parameters) {
    const div = document.createElement("div");
    div.className = "param";
    const label = document.createElement("label");
    label.textContent = p.name;
    let input;
    if (p.choices) {
      input = document.createElement("select");
      for (const c of p.choices) input.add(new Option(c, c));
    } else {
      input = document.createElement("input");
      input.type = "text";
    }
    input.id = "p-" + p.name;
    input.name = p.name;
    input.value = set[p.name] ?? p.default;
    label.append(input);
    div.append(label);
    if (p.kind === "number") div.append(slider(p, input));
    if (p.comment || p.kind === "expression") {
      const small = document.createElement("small");
      small.textContent = [p.comment, p.kind === "expression" ? `= ${p.value}` : ""].filter(Boolean).join(" ");
      div.append(small);
    }
    form.append(div);
  }
  const columns = $("columns");
  columns.replaceChildren();
  for (const c of d.columns.slice(1)) columns.add(new Option(c, c));
  const names = d.parameters.map((p) => p.name);
  for (const id of ["sw-name", "sw-name2"]) {
    const sel = $(id);
    const keep = id === "sw-name2" ? [new Option("(none)", "")] : [];
    sel.replaceChildren(...keep, ...names.map((n) => new Option(n, n)));
  }
  if (d.columns.length > 1) $("sw-metrics").value = `final(${d.columns[1]})`;
}

function specs() {
  const d = page.scenario;
  const own = d.plots.length > 0 ? d.plots : [{ title: null, x: "t", y: d.columns.slice(1, 4) }];
  return own.concat(page.extra);
}

function redraw() {
  plots.draw($("plots"), specs(), page.runs);
}

async function choose(path, set = {}, tEnd = "") {
  status("loading " + path + " …");
  page.scenario = null;
  page.runs = [];
  page.extra = [];
  $("csv").disabled = true;
  $("scenario").value = path;
  try {
    const d = await api.scenario(path);
    page.scenario = d;
    $("description").textContent = d.description || "";
    $("t_end").value = tEnd || "";
    buildForm(d, set);
    redraw();
    status(`${d.name}: ${d.parameters.length} parameters, ${d.columns.length - 1} recorded columns`);
    state.write(path, set, tEnd, false);
  } catch (e) {
    status(e.message, true);
  }
}

let runId = 0;

async function runNow() {
  const d = page.scenario;
  if (!d || page.busy) return;
  const clicked = performance.now();
  const set = changed();
  const tEnd = $("t_end").value.trim();
  const id = "run-" + Date.now().toString(36) + "-" + runId++;
  const request = { path: d.path, set, id, events: true };
  if (tEnd) request.t_end = Number(tEnd);
  page.busy = true;
  $("run").disabled = true;
  $("cancel").disabled = false;
  $("cancel").dataset.id = id;
  status("running …");
  // Progress only for runs that last: listen after a quarter second.
  let stop = null;
  const later = setTimeout(() => {
    $("progress").hidden = false;
    stop = api.progress(id, (p) => {
      $("progress").value = p.fraction ?? 0;
      if (p.t != null) status(`${p.state}: t = ${p.t.toPrecision(6)}`);
    });
  }, 250);
  try {
    const r = await api.run(request);
    const columns = {};
    for (const name of r.header) columns[name] = api.numbers(r.columns[name]);
    const label = Object.entries(set).map(([k, v]) => `${k}=${v}`).join(", ");
    const entry = { label, set, header: r.header, columns, events: r.events, stats: r.stats };
    page.runs = $("overlay").checked ? page.runs.concat([entry]) : [entry];
    redraw();
    await new Promise(requestAnimationFrame);
    page.lastRunMs = performance.now() - clicked;
    page.lastServerMs = r.stats.run_ms;
    page.runCount += 1;
    state.write(d.path, set, tEnd, true);
    $("csv").disabled = false;
    const kinds = {};
    for (const e of r.events) kinds[e.kind] = (kinds[e.kind] || 0) + 1;
    const ev = Object.entries(kinds).map(([k, n]) => `${n} ${k}`).join(", ");
    status(
      `${r.stats.rows} rows, ${r.stats.steps} steps in ${r.stats.run_ms.toFixed(1)} ms` +
        ` (${page.lastRunMs.toFixed(0)} ms to the curves)` + (ev ? `; events: ${ev}` : ""),
    );
  } catch (e) {
    status(e.message, true);
  } finally {
    clearTimeout(later);
    if (stop) stop();
    $("progress").hidden = true;
    page.busy = false;
    $("run").disabled = false;
    $("cancel").disabled = true;
  }
}

// The last run as CSV text: the header, then one row per output instant
// (numbers in JavaScript's shortest round-trip form).
function csvText(r) {
  const lines = [r.header.join(",")];
  const n = r.columns[r.header[0]].length;
  for (let i = 0; i < n; i++) lines.push(r.header.map((h) => String(r.columns[h][i])).join(","));
  return lines.join("\n") + "\n";
}

function download() {
  const r = page.runs[page.runs.length - 1];
  if (!r) return;
  const blob = new Blob([csvText(r)], { type: "text/csv" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = `${page.scenario.name}${r.label ? "_" + r.label.replace(/[^\w.=-]+/g, "_") : ""}.csv`;
  a.click();
  URL.revokeObjectURL(a.href);
}

function values(text) {
  return text.split(",").map((s) => s.trim()).filter((s) => s !== "").map((s) => (Number.isFinite(Number(s)) ? Number(s) : s));
}

async function sweepNow() {
  const d = page.scenario;
  if (!d) return;
  const grid = [{ name: $("sw-name").value, values: values($("sw-values").value) }];
  if ($("sw-name2").value) grid.push({ name: $("sw-name2").value, values: values($("sw-values2").value) });
  const metrics = $("sw-metrics").value.split("\n").map((s) => s.trim()).filter(Boolean);
  $("sw-status").textContent = "sweeping …";
  $("sw-status").className = "";
  try {
    const r = await api.sweep({ path: d.path, set: changed(), grid, metrics });
    page.sweep = r;
    const table = $("sw-table");
    table.replaceChildren();
    const head = table.insertRow();
    for (const h of [...r.parameters, ...r.metrics, "error"]) head.append(Object.assign(document.createElement("th"), { textContent: h }));
    for (const p of r.points) {
      const row = table.insertRow();
      for (const v of [...p.values, ...p.metrics, p.error || ""]) row.insertCell().textContent = String(v);
    }
    const xs = r.points.map((p) => Number(p.values[0]));
    const ys = r.points.map((p) => Number(p.metrics[0]));
    if (r.metrics.length > 0) plots.scatter($("sw-plot"), r.parameters[0], r.metrics[0], xs, ys);
    $("sw-status").textContent = `${r.points.length} runs, ${r.points.filter((p) => p.error).length} failed`;
  } catch (e) {
    $("sw-status").textContent = e.message;
    $("sw-status").className = "error";
  }
}

function tab(which) {
  $("run-view").hidden = which !== "run";
  $("sweep-view").hidden = which !== "sweep";
  $("tab-run").classList.toggle("on", which === "run");
  $("tab-sweep").classList.toggle("on", which === "sweep");
}

async function start() {
  $("run").addEventListener("click", runNow);
  $("cancel").addEventListener("click", () => api.cancel($("cancel").dataset.id).catch(() => {}));
  $("params").addEventListener("keydown", (e) => e.key === "Enter" && (e.preventDefault(), runNow()));
  $("t_end").addEventListener("keydown", (e) => e.key === "Enter" && runNow());
  $("clear").addEventListener("click", () => ((page.runs = []), redraw()));
  $("csv").addEventListener("click", download);
  $("plot-add").addEventListener("click", () => {
    const y = [...$("columns").selectedOptions].map((o) => o.value);
    if (y.length > 0) page.extra.push({ title: null, x: "t", y });
    redraw();
  });
  $("scenario").addEventListener("change", () => choose($("scenario").value));
  $("tab-run").addEventListener("click", () => tab("run"));
  $("tab-sweep").addEventListener("click", () => tab("sweep"));
  $("sw-run").addEventListener("click", sweepNow);
  try {
    const list = await api.scenarios();
    const sel = $("scenario");
    for (const s of list) sel.add(new Option(s.name ? `${s.path} — ${s.name}` : `${s.path} (does not read)`, s.path));
    const from = state.read();
    const path = from.path || (list[0] && list[0].path);
    if (path) {
      await choose(path, from.set, from.tEnd || "");
      if (from.run) await runNow();
    }
    page.ready = true;
  } catch (e) {
    status(e.message, true);
  }
}

start();
