// The playground page: editor, run/stop, simulator, outputs, plot, queries, debugger, statistics.
import { EditorView, EditorState, basicSetup, keymap } from "./vendor/codemirror.js";
import { siddhiSupport } from "./siddhi.js";
import { Plot } from "./plot.js";

const $ = (id) => document.getElementById(id);
const API = "api";
const session = sessionStorage.getItem("srota-session") || crypto.randomUUID().slice(0, 12);
sessionStorage.setItem("srota-session", session);
const ROWS_KEPT = 200;

const state = { app: null, outputs: new Map(), events: null, problems: [], fileName: "app.siddhi" };
const plot = new Plot($("plot"), $("plot-legend"));
window.srota = { state, plot };  // for the browser tests and the curious

// ------------------------------------------------------------------ server calls
async function call(method, path, body) {
  const response = await fetch(path, {
    method, headers: body === undefined ? {} : { "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let data;
  try { data = JSON.parse(text); } catch { data = { error: text || response.statusText }; }
  if (!response.ok) {
    const where = data.line ? `line ${data.line}${data.column ? ", column " + data.column : ""}: ` : "";
    throw new Error(where + (data.error || response.statusText));
  }
  return data;
}
const sessionCall = (method, path, body) => call(method, `${API}/sessions/${session}/${path}`, body);

function say(text, kind = "ok") {
  const box = $("message");
  box.textContent = text;
  box.className = kind;
}
async function attempt(action) {
  try { return await action(); } catch (e) { say(e.message, "error"); return undefined; }
}

// ------------------------------------------------------------------ editor
function showProblems(result) {
  state.problems = result.problems;
  const list = $("problems");
  list.textContent = "";
  for (const p of result.problems) {
    const item = document.createElement("div");
    item.className = "error";
    item.textContent = `${p.line ?? "?"}:${p.column ?? "?"}: ${p.message}`;
    item.onclick = () => {
      if (!p.line) return;
      const line = editor.state.doc.line(Math.min(p.line, editor.state.doc.lines));
      editor.dispatch({ selection: { anchor: Math.min(line.from + (p.column || 1) - 1, line.to) }, scrollIntoView: true });
      editor.focus();
    };
    list.append(item);
  }
  $("check-status").textContent = result.problems.length ? `${result.problems.length} problem(s)` : "no problems";
  $("check-status").className = result.problems.length ? "error" : "muted";
}

const editor = new EditorView({
  parent: $("editor"),
  state: EditorState.create({
    doc: "",
    extensions: [
      keymap.of([{ key: "Mod-Enter", run: () => { run(); return true; } }]),  // before basicSetup's own Mod-Enter
      basicSetup,
      siddhiSupport((text) => call("POST", `${API}/validate`, { text }), showProblems),
    ],
  }),
});
window.srota.editor = editor;

function setText(text, name) {
  editor.dispatch({ changes: { from: 0, to: editor.state.doc.length, insert: text } });
  if (name) state.fileName = name;
}

async function loadExamples() {
  const examples = await call("GET", `${API}/examples`);
  const select = $("examples");
  select.textContent = "";
  for (const ex of examples) select.append(new Option(`${ex.title} (${ex.name})`, ex.name));
  select.onchange = async () => setText(await (await fetch(`${API}/examples/${encodeURIComponent(select.value)}`)).text(), select.value);
  if (examples.length) await select.onchange();
}

$("open-file").onchange = async (e) => {
  const file = e.target.files[0];
  if (file) setText(await file.text(), file.name);
  e.target.value = "";
};
$("save").onclick = () => {
  const link = document.createElement("a");
  link.href = URL.createObjectURL(new Blob([editor.state.doc.toString()], { type: "text/plain" }));
  link.download = state.fileName.endsWith(".siddhi") ? state.fileName : state.fileName + ".siddhi";
  link.click();
  URL.revokeObjectURL(link.href);
};

// ------------------------------------------------------------------ deploy to server
// Under a service's admin server (http.playground.enabled) the page can deploy the app there
// through Siddhi Runner's API, as Siddhi Tooling's "Deploy to server" does; the button shows
// only where that API answers (not under a stand-alone `srota playground`).
const SIDDHI_APPS = new URL("../siddhi-apps", new URL(".", location.href)).pathname;
fetch(SIDDHI_APPS, { credentials: "same-origin" })
  .then((r) => { if (r.ok) $("deploy").hidden = false; })
  .catch(() => {});
$("deploy").onclick = async () => {
  const status = $("deploy-status");
  status.textContent = "deploying…";
  try {
    const r = await fetch(SIDDHI_APPS, {
      method: "PUT", credentials: "same-origin", headers: { "Content-Type": "text/plain" },
      body: editor.state.doc.toString(),
    });
    let body = {};
    try { body = await r.json(); } catch { /* no JSON body */ }
    if (r.ok) {
      status.textContent = r.status === 201 ? "deployed to the server" : "updated on the server";
    } else {
      const where = body.line ? ` (line ${body.line}, column ${body.column})` : "";
      status.textContent = `not deployed${where}: ${body.message || body.error || r.statusText}`;
    }
  } catch (e) {
    status.textContent = `not deployed: ${e}`;
  }
};

// ------------------------------------------------------------------ run and stop
async function run() {
  say("starting…");
  // (the app being replaced takes no more sends: what the status says until the new one runs)
  $("run-status").textContent = "starting…";
  const app = await attempt(() => sessionCall("POST", "run", { text: editor.state.doc.toString(), attach: $("attach").checked }));
  if (!app) { setRunning(null); return; }
  state.outputs.clear();
  setRunning(app);
  say(`running ${app.name}`);
}
async function stop() {
  await attempt(() => sessionCall("POST", "stop"));
  setRunning(null);
  say("stopped");
}
$("run").onclick = run;
$("stop").onclick = stop;

function setRunning(app) {
  state.app = app;
  $("run-status").textContent = app ? `running ${app.name}` : "not running";
  $("stop").disabled = !app;
  $("run").textContent = app ? "Restart" : "Run";
  const streams = app ? app.streams : [];
  const inputs = streams.filter((s) => s.defined);
  fill($("sim-stream"), inputs.map((s) => s.name));
  fill($("out-stream"), ["(all)", ...streams.map((s) => s.name)]);
  fill($("plot-stream"), streams.map((s) => s.name));
  buildForms();
  buildPlotChoices();
  buildBreakpoints();
  renderOutputs();
  $("simulations").tBodies[0].textContent = "";
  $("held-box").hidden = true;
  $("statistics").textContent = "";
}

function fill(select, values) {
  const keep = select.value;
  select.textContent = "";
  for (const v of values) select.append(new Option(v, v));
  if (values.includes(keep)) select.value = keep;
}

const stream = (name) => state.app?.streams.find((s) => s.name === name);
const isNumeric = (type) => ["int", "long", "float", "double"].includes(type);

// ------------------------------------------------------------------ simulator
function buildForms() {
  const s = stream($("sim-stream").value);
  const single = $("single-fields"), rnd = $("random-fields");
  single.textContent = ""; rnd.textContent = "";
  if (!s) return;
  for (const a of s.attributes) {
    const label = document.createElement("label");
    label.textContent = `${a.name} (${a.type}) `;
    const input = document.createElement("input");
    input.name = a.name;
    input.dataset.type = a.type;
    if (a.type === "bool") { input.type = "checkbox"; } else { input.type = isNumeric(a.type) ? "number" : "text"; input.step = "any"; }
    label.append(input);
    single.append(label);
    const r = document.createElement("label");
    r.textContent = `${a.name} `;
    const spec = document.createElement("input");
    spec.name = a.name;
    spec.placeholder = isNumeric(a.type) ? "min..max (0..100)" : (a.type === "bool" ? "(either)" : "a,b,c or sensor-## (random letters)");
    r.append(spec);
    rnd.append(r);
  }
}
$("sim-stream").onchange = buildForms;

$("single-form").onsubmit = async (e) => {
  e.preventDefault();
  const s = stream($("sim-stream").value);
  if (!s) { say("run the app first", "error"); return; }
  const values = s.attributes.map((a) => {
    const input = $("single-fields").querySelector(`[name="${CSS.escape(a.name)}"]`);
    if (a.type === "bool") return input.checked;
    if (input.value === "") return null;
    return isNumeric(a.type) ? Number(input.value) : input.value;
  });
  const sent = await attempt(() => sessionCall("POST", "send", { stream: s.name, events: [values] }));
  if (sent) say(`sent 1 event to ${s.name}`);
};

$("file-form").onsubmit = async (e) => {
  e.preventDefault();
  const file = $("sim-file").files[0];
  const s = $("sim-stream").value;
  if (!file) { say("choose a CSV or JSON file", "error"); return; }
  if (file.size > 16 * 1024 * 1024) { say(`${file.name} is ${(file.size / 1048576).toFixed(1)} MiB: the playground takes files up to 16 MiB`, "error"); return; }
  const kind = file.name.toLowerCase().endsWith(".json") ? "json" : "csv";
  const sim = await attempt(async () => sessionCall("POST", "simulations", {
    stream: s, kind, content: await file.text(), rate: $("sim-rate").value || null,
    timestamp_column: $("sim-ts").value.trim() || null, speed: Number($("sim-speed").value) || 1,
  }));
  if (sim) { say(`replaying ${file.name} (${sim.total} events) into ${s}`); showSimulation(sim); }
};

$("random-form").onsubmit = async (e) => {
  e.preventDefault();
  const s = stream($("sim-stream").value);
  if (!s) { say("run the app first", "error"); return; }
  const attributes = {};
  for (const a of s.attributes) {
    const text = $("random-fields").querySelector(`[name="${CSS.escape(a.name)}"]`).value.trim();
    if (!text) continue;
    const range = /^\s*(-?[\d.]+)\s*\.\.\s*(-?[\d.]+)\s*$/.exec(text);
    attributes[a.name] = range ? { min: Number(range[1]), max: Number(range[2]) }
      : (a.type === "string" && /[#?]/.test(text) && !text.includes(",")) ? { pattern: text }
        : { values: text.split(",").map((v) => v.trim()).filter(Boolean) };
  }
  const sim = await attempt(() => sessionCall("POST", "simulations", {
    stream: s.name, kind: "random", attributes, rate: $("random-rate").value || 10, count: $("random-count").value || null,
  }));
  if (sim) { say(`random events into ${s.name}`); showSimulation(sim); }
};

function showSimulation(sim) {
  const body = $("simulations").tBodies[0];
  let row = body.querySelector(`tr[data-id="${sim.id}"]`);
  if (!row) {
    row = body.insertRow();
    row.dataset.id = sim.id;
    for (let i = 0; i < 5; i++) row.insertCell();
    const act = (label, action) => {
      const b = document.createElement("button");
      b.textContent = label;
      b.onclick = async () => { const s = await attempt(() => sessionCall("POST", `simulations/${sim.id}/${action}`)); if (s) showSimulation(s); };
      return b;
    };
    row.cells[4].append(act("Pause", "pause"), act("Resume", "resume"), act("Stop", "stop"));
  }
  row.cells[0].textContent = sim.stream;
  row.cells[1].textContent = sim.kind;
  row.cells[2].textContent = sim.total ? `${sim.sent} / ${sim.total}` : String(sim.sent);
  row.cells[3].textContent = sim.error ? `${sim.state}: ${sim.error}` : sim.state;
  row.className = sim.state;
  if (sim.error) say(sim.error, "error");
}

// ------------------------------------------------------------------ outputs
function onOutput(message) {
  let kept = state.outputs.get(message.stream);
  if (!kept) { kept = { rows: [], total: 0 }; state.outputs.set(message.stream, kept); }
  kept.rows.push(...message.events);
  kept.total += message.total;
  if (kept.rows.length > ROWS_KEPT) kept.rows.splice(0, kept.rows.length - ROWS_KEPT);
  scheduleRender();
  if (message.stream === $("plot-stream").value) plotRows(message.events);
}

let renderPending = false;
function scheduleRender() {
  if (renderPending) return;
  renderPending = true;
  requestAnimationFrame(() => { renderPending = false; renderOutputs(); });
}

function table(attributes, rows, withTime = true) {
  const t = document.createElement("table");
  const head = t.createTHead().insertRow();
  for (const name of [...(withTime ? ["time"] : []), ...attributes]) {
    const th = document.createElement("th"); th.textContent = name; head.append(th);
  }
  const body = t.createTBody();
  for (const e of rows) {
    const r = body.insertRow();
    if (withTime) r.insertCell().textContent = new Date(e.timestamp).toISOString().replace("T", " ").slice(0, 23);
    for (const v of e.data) r.insertCell().textContent = v === null ? "null" : (typeof v === "object" ? JSON.stringify(v) : String(v));
  }
  return t;
}

function renderOutputs() {
  const box = $("outputs");
  box.textContent = "";
  if (!state.app) return;
  const only = $("out-stream").value;
  for (const s of state.app.streams) {
    if (only !== "(all)" && only !== s.name) continue;
    const kept = state.outputs.get(s.name);
    if (!kept && only === "(all)") continue;
    const section = document.createElement("div");
    section.className = "output";
    section.dataset.stream = s.name;
    const title = document.createElement("h4");
    title.textContent = `${s.name} — ${kept ? kept.total : 0} event(s)${kept && kept.total > kept.rows.length ? `, last ${kept.rows.length} shown` : ""}`;
    section.append(title, table(s.attributes.map((a) => a.name), kept ? kept.rows.slice().reverse() : []));
    box.append(section);
  }
}
$("out-stream").onchange = renderOutputs;
$("clear-output").onclick = () => { state.outputs.clear(); renderOutputs(); };

// ------------------------------------------------------------------ plot
function buildPlotChoices() {
  const s = stream($("plot-stream").value);
  const attrs = s ? s.attributes : [];
  const numeric = attrs.filter((a) => isNumeric(a.type)).map((a) => a.name);
  fill($("plot-y"), numeric);
  fill($("plot-group"), ["(none)", ...attrs.filter((a) => !isNumeric(a.type) || a.type === "int" || a.type === "long").map((a) => a.name)]);
  if ($("plot-group").value === "(none)") {
    const firstString = attrs.find((a) => a.type === "string");
    if (firstString) $("plot-group").value = firstString.name;
  }
  plot.reset();
  const kept = state.outputs.get($("plot-stream").value);
  if (kept) plotRows(kept.rows);
}
function plotRows(events) {
  const s = stream($("plot-stream").value);
  if (!s) return;
  const y = s.attributes.findIndex((a) => a.name === $("plot-y").value);
  const g = s.attributes.findIndex((a) => a.name === $("plot-group").value);
  if (y < 0) return;
  plot.add(events.map((e) => ({ timestamp: e.timestamp, y: e.data[y], group: g < 0 ? null : e.data[g] })));
}
$("plot-stream").onchange = buildPlotChoices;
$("plot-y").onchange = $("plot-group").onchange = () => {
  plot.reset();
  const kept = state.outputs.get($("plot-stream").value);
  if (kept) plotRows(kept.rows);
};

// ------------------------------------------------------------------ on-demand queries
$("query-run").onclick = async () => {
  const result = await attempt(() => sessionCall("POST", "query", { text: $("query-text").value }));
  const box = $("query-result");
  box.textContent = "";
  if (!result) return;
  const width = result.events.length ? result.events[0].data.length : 0;
  const p = document.createElement("p");
  p.textContent = `${result.total} row(s)`;
  box.append(p, table(Array.from({ length: width }, (_, i) => `#${i + 1}`), result.events, false));
  say(`query returned ${result.total} row(s)`);
};

// ------------------------------------------------------------------ debugger
function buildBreakpoints() {
  const body = $("breakpoints").tBodies[0];
  body.textContent = "";
  for (const q of state.app ? state.app.queries : []) {
    const row = body.insertRow();
    row.dataset.query = q;
    row.insertCell().textContent = q;
    for (const terminal of ["in", "out"]) {
      const box = document.createElement("input");
      box.type = "checkbox";
      box.dataset.terminal = terminal;
      box.setAttribute("aria-label", `${q} ${terminal}`);
      box.onchange = async () => {
        const ok = await attempt(() => sessionCall(box.checked ? "PUT" : "DELETE", `breakpoints/${encodeURIComponent(q)}/${terminal}`));
        if (!ok) box.checked = !box.checked;
      };
      row.insertCell().append(box);
    }
    const view = document.createElement("button");
    view.textContent = "State";
    view.onclick = () => showQueryState(q);
    row.insertCell().append(view);
  }
}

async function showQueryState(query) {
  const result = await attempt(() => sessionCall("GET", `queries/${encodeURIComponent(query)}/state`));
  if (result) { $("held-box").hidden = false; $("query-state").textContent = JSON.stringify(result.state, null, 2); }
}

function onHeld(message) {
  $("held-box").hidden = false;
  $("held-title").textContent = `Held at ${message.query} ${message.terminal.toUpperCase()}: ${message.events.length} event(s)`;
  const box = $("held-events");
  box.textContent = "";
  box.append(table(message.events[0] ? message.events[0].data.map((_, i) => `#${i + 1}`) : [], message.events));
  showTab("debug");
  showQueryState(message.query);
  say(`held at ${message.query} ${message.terminal.toUpperCase()}`);
}
async function step(action) {
  $("held-title").textContent = "running…";
  $("held-events").textContent = "";
  await attempt(() => sessionCall("POST", `debug/${action}`));
}
$("debug-next").onclick = () => step("next");
$("debug-play").onclick = () => step("play");

// ------------------------------------------------------------------ statistics
function onStatistics(report) {
  const box = $("statistics");
  box.textContent = "";
  if (!report) return;
  const streams = Object.entries(report.streams || {}).map(([name, s]) => ({ timestamp: null, data: [name, s.events_in, s.throughput] }));
  const queries = Object.entries(report.queries || {}).map(([name, q]) => ({
    timestamp: null, data: [name, q.events_in, q.events_out, q.throughput, q.latency_ms?.p50, q.latency_ms?.p99] }));
  const h = (text) => { const e = document.createElement("h3"); e.textContent = text; return e; };
  box.append(h("Streams"), table(["stream", "events in", "events/s"], streams, false),
    h("Queries"), table(["query", "events in", "events out", "events/s", "p50 ms", "p99 ms"], queries, false));
}

// ------------------------------------------------------------------ server events
function connect() {
  const events = new EventSource(`${API}/sessions/${session}/events`);
  state.events = events;
  events.addEventListener("output", (e) => onOutput(JSON.parse(e.data)));
  events.addEventListener("held", (e) => onHeld(JSON.parse(e.data)));
  events.addEventListener("simulation", (e) => showSimulation(JSON.parse(e.data)));
  events.addEventListener("statistics", (e) => onStatistics(JSON.parse(e.data).report));
  events.addEventListener("stopped", (e) => {
    const reason = JSON.parse(e.data).reason;
    setRunning(null);
    if (reason && reason !== "stopped") say(reason, "error");
  });
}

// ------------------------------------------------------------------ tabs
function showTab(name) {
  for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("active", b.dataset.tab === name);
  for (const t of document.querySelectorAll(".tab")) t.hidden = t.id !== `tab-${name}`;
  if (name === "plot") plot.draw();
}
for (const b of document.querySelectorAll("#tabs button")) b.onclick = () => showTab(b.dataset.tab);

connect();
setRunning(null);
const info = await call("GET", `${API}/info`);
if (info.attach) { $("attach-box").hidden = false; $("attach-config").textContent = info.config; }
await loadExamples();
document.body.dataset.ready = "true";
