// The trafikey dashboard: three views (overview, queue, job) rendered from
// the JSON API under api/, refreshed by polling. Every value from the
// server is put in the page as text (textContent), never as markup.
"use strict";

// info is /api/info, read once, while the first view loads.
const state = { info: null, infoP: null, timer: null, queues: [] };
const view = document.getElementById("view");

// el builds an element: el("td", {class: "num"}, "12", child…).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return e;
}

// put shows nodes as the view; arrays are flattened, and null, undefined
// and false left out.
function put(...nodes) {
  view.replaceChildren(...nodes.flat().filter((n) => n !== undefined && n !== null && n !== false));
}

const SVG = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  return e;
}

class APIError extends Error {
  constructor(status, body) {
    super((body && body.error) || ("HTTP " + status));
    this.status = status;
    this.code = body && body.code;
  }
}

async function api(path, opts) {
  const res = await fetch("api/" + path, Object.assign({ headers: { "Accept": "application/json" } }, opts));
  let body = null;
  try { body = await res.json(); } catch (_) { /* not JSON */ }
  if (!res.ok) throw new APIError(res.status, body);
  return body;
}

function act(path) {
  return api(path, { method: "POST", headers: { "X-Trafikey-Action": "1", "Accept": "application/json" } });
}

const enc = encodeURIComponent;
const fmt = new Intl.NumberFormat();
const num = (n) => fmt.format(n);
const rate = (r) => r === 0 ? "0" : r >= 100 ? fmt.format(Math.round(r)) : r.toFixed(r >= 10 ? 1 : 2);

function ms(d) {
  if (d < 1000) return d + " ms";
  if (d < 60000) return (d / 1000).toFixed(d % 1000 ? 1 : 0) + " s";
  if (d < 3600000) return (d / 60000).toFixed(d % 60000 ? 1 : 0) + " min";
  return (d / 3600000).toFixed(1) + " h";
}

function ago(t) {
  const d = Date.now() - new Date(t).getTime();
  return d < 0 ? "just now" : ms(Math.round(d / 1000) * 1000) + " ago";
}

function setStatus(text, bad) {
  const s = document.getElementById("status");
  s.textContent = text;
  s.className = bad ? "bad" : "";
}

function card(label, value, cls) {
  return el("div", { class: "card " + (cls || ""), "data-card": cls || label },
    el("div", { class: "n" }, value), el("div", { class: "l" }, label));
}

// chart draws completed/s and failed/s over the kept samples as SVG.
function chart(points) {
  const box = el("div", { class: "panel" });
  box.append(el("div", { class: "legend" },
    el("span", { class: "completed" }, "completed / s"), el("span", { class: "failed" }, "failed / s")));
  const W = Math.max(320, (view.clientWidth || 900) - 30), H = 180, L = 44, R = 8, T = 8, B = 22;
  const s = svg("svg", { class: "chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-label": "throughput and failures over time" });
  let max = 0;
  for (const p of points) max = Math.max(max, p.completed_per_sec, p.failed_per_sec);
  max = niceMax(max);
  const n = points.length;
  const x = (i) => L + (n <= 1 ? 0 : (i / (n - 1)) * (W - L - R));
  const y = (v) => T + (1 - v / max) * (H - T - B);
  for (const f of [0, 0.5, 1]) {
    s.append(svg("line", { class: "grid", x1: L, x2: W - R, y1: y(max * f), y2: y(max * f) }));
    const t = svg("text", { class: "axis", x: L - 6, y: y(max * f) + 4, "text-anchor": "end" });
    t.textContent = rate(max * f);
    s.append(t);
  }
  if (n > 1) {
    const line = (key) => points.map((p, i) => (i ? "L" : "M") + x(i).toFixed(1) + " " + y(p[key]).toFixed(1)).join(" ");
    s.append(svg("path", { class: "area", d: line("completed_per_sec") + ` L ${x(n - 1)} ${y(0)} L ${x(0)} ${y(0)} Z` }));
    s.append(svg("path", { class: "completed", d: line("completed_per_sec") }));
    s.append(svg("path", { class: "failed", d: line("failed_per_sec") }));
    const span = new Date(points[n - 1].at) - new Date(points[0].at);
    for (const [i, label, anchor] of [[0, "−" + ms(Math.round(span / 1000) * 1000), "start"], [n - 1, "now", "end"]]) {
      const t = svg("text", { class: "axis", x: x(i), y: H - 6, "text-anchor": anchor });
      t.textContent = label;
      s.append(t);
    }
  } else {
    const t = svg("text", { class: "axis", x: W / 2, y: H / 2, "text-anchor": "middle" });
    t.textContent = "collecting samples…";
    s.append(t);
  }
  box.append(s);
  return box;
}

function niceMax(v) {
  if (v <= 0) return 1;
  const p = Math.pow(10, Math.floor(Math.log10(v)));
  for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
  return 10 * p;
}

function stateBadge(s) {
  return el("span", { class: "badge " + s, "data-state": s }, s);
}

function notice(text, bad) {
  return el("div", { class: "notice" + (bad ? " bad" : ""), role: "status" }, text);
}

// ---- overview ----

// cell is a number of the queue table; zeros are quiet.
function cell(col, v, show) {
  return el("td", { class: v === 0 ? "num zero" : "num", "data-col": col }, show(v));
}

async function renderOverview() {
  const t0 = performance.now();
  const [ov, series] = await Promise.all([api("queues"), api("series")]);
  state.queues = ov.queues.map((q) => q.name);
  fillSearch();
  const total = { pending: 0, delayed: 0, active: 0, dead: 0, cps: 0, fps: 0 };
  for (const q of ov.queues) {
    total.pending += q.pending; total.delayed += q.delayed; total.active += q.active; total.dead += q.dead;
    total.cps += q.completed_per_sec; total.fps += q.failed_per_sec;
  }
  const failRate = total.cps + total.fps > 0 ? (100 * total.fps / (total.cps + total.fps)).toFixed(1) + " %" : "–";
  const rows = document.createDocumentFragment();
  for (const q of ov.queues) {
    rows.append(el("tr", { "data-queue": q.name },
      el("td", {}, el("a", { href: "#/queue/" + enc(q.name) }, q.name), " ",
        q.paused ? el("span", { class: "badge paused" }, "paused") : null,
        q.error ? el("span", { class: "badge dead", title: q.error }, "error") : null),
      cell("pending", q.pending, num), cell("delayed", q.delayed, num), cell("active", q.active, num),
      cell("dead", q.dead, num), cell("lanes", q.lanes, num), cell("completed", q.totals.completed, num),
      cell("rate", q.completed_per_sec, rate),
    ));
  }
  const table = ov.queues.length === 0
    ? el("div", { class: "empty" }, "No queues on this server yet: a queue appears once a producer or worker opens it.")
    : el("table", { id: "queues" },
      el("thead", {}, el("tr", {}, el("th", {}, "queue"), ...["pending", "delayed", "active", "dead", "lanes", "completed", "completed / s"].map((h) => el("th", { class: "num" }, h)))),
      el("tbody", {}, rows));
  put(
    el("h1", {}, "Queues", el("span", { class: "muted" }, ov.queues.length + (ov.queues.length === 1 ? " queue" : " queues"))),
    ov.error ? notice("Finding queues failed: " + ov.error, true) : null,
    el("div", { class: "cards", id: "totals" },
      card("pending", num(total.pending), "pending"), card("delayed", num(total.delayed), "delayed"),
      card("active", num(total.active), "active"), card("dead", num(total.dead), "dead"),
      card("completed / s", rate(total.cps), "rate"), card("failure rate", failRate, "failure")),
    el("h2", {}, "Throughput, all queues"),
    chart(series.points),
    el("h2", {}, "By queue"),
    table,
  );
  // The first overview of a page load, marked for anyone who measures it
  // (the browser's performance panel, the tests).
  if (performance.getEntriesByName("trafikey:overview-rendered").length === 0) {
    performance.mark("trafikey:overview-rendered", { detail: { queues: ov.queues.length } });
    performance.measure("trafikey:overview", { start: t0, end: performance.now(), detail: { queues: ov.queues.length } });
  }
  setStatus("sampled " + new Date(ov.sampled_at).toLocaleTimeString() + ", every " + ms(ov.sample_ms));
}

// ---- queue ----

async function renderQueue(name, message) {
  const [qr, series] = await Promise.all([api("queues/" + enc(name)), api("series?queue=" + enc(name)), state.infoP]);
  const q = qr.queue;
  const actions = state.info.read_only ? null : el("div", { class: "actions" },
    q.paused
      ? el("button", { id: "act-resume", class: "primary", onclick: () => queueAction(name, "resume") }, "Resume")
      : el("button", { id: "act-pause", onclick: () => queueAction(name, "pause") }, "Pause"),
    el("button", { id: "act-promote", onclick: () => queueAction(name, "promote"), title: "move due delayed jobs to pending now" }, "Promote due"));
  const lanes = qr.lanes.length === 0
    ? el("div", { class: "empty" }, "No lane has waiting or active jobs.")
    : el("table", { id: "lanes" },
      el("thead", {}, el("tr", {}, el("th", {}, "lane"), ...["waiting", "active", "cap"].map((h) => el("th", { class: "num" }, h)), el("th", {}, ""))),
      el("tbody", {}, qr.lanes.map((l) => el("tr", { "data-lane": l.name },
        el("td", {}, l.name),
        el("td", { class: "num", "data-col": "waiting" }, num(l.waiting)),
        el("td", { class: "num", "data-col": "active" }, num(l.active)),
        el("td", { class: "num", "data-col": "cap" }, l.cap ? num(l.cap) : "–"),
        el("td", {}, l.paused ? el("span", { class: "badge paused" }, "paused") : null)))));
  const t = q.totals;
  put(
    el("div", { class: "crumbs" }, el("a", { href: "#/" }, "Queues"), " / ", q.name),
    el("h1", {}, q.name, q.paused ? el("span", { class: "badge paused", id: "paused" }, "paused") : null,
      el("span", { class: "muted" }, qr.executor + " executor"), actions),
    message || null,
    el("div", { class: "cards", id: "counts" },
      card("pending", num(q.pending), "pending"), card("delayed", num(q.delayed), "delayed"),
      card("active", num(q.active), "active"), card("dead", num(q.dead), "dead"),
      card("lanes", num(q.lanes), "lanes"),
      card("rate limit", q.rate_limit ? num(q.rate_limit) + " / " + ms(q.rate_window_ms) : "none", "ratelimit")),
    el("h2", {}, "Throughput"),
    chart(series.points),
    el("div", { class: "two" },
      el("div", {}, el("h2", {}, "Lifetime"), el("div", { class: "panel" }, el("dl", { class: "fields" },
        ...[["added", t.added], ["completed", t.completed], ["failed attempts", t.failed], ["retried", t.retried],
          ["dead-lettered", t.dead], ["leases recovered", t.recovered], ["removed", t.removed], ["requeued", t.requeued], ["cancelled", t.cancelled]]
          .flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, num(v))])))),
      el("div", {}, el("h2", {}, "Lanes" + (qr.lanes_cut ? " (first " + qr.lanes.length + ")" : "")), lanes)),
  );
  setStatus("read " + new Date().toLocaleTimeString());
}

async function queueAction(name, action) {
  let msg;
  try {
    const r = await act("queues/" + enc(name) + "/" + action);
    msg = notice(action === "promote" ? "Promoted " + num(r.promoted) + " due jobs." : (action === "pause" ? "Paused." : "Resumed."));
  } catch (e) {
    msg = notice(action + " failed: " + e.message, true);
  }
  await renderQueue(name, msg).catch(showError);
}

// ---- job ----

async function renderJob(queue, id, message) {
  await state.infoP;
  let j;
  try {
    j = await api("queues/" + enc(queue) + "/jobs/" + enc(id));
  } catch (e) {
    if (e.status !== 404) throw e;
    put(
      el("div", { class: "crumbs" }, el("a", { href: "#/" }, "Queues"), " / ", el("a", { href: "#/queue/" + enc(queue) }, queue), " / job " + id),
      message || null,
      el("div", { class: "empty", id: "job-missing" }, e.code === "not_found" ? "Job " + id + " is not in queue " + queue + ": it completed, was removed, or never existed." : e.message));
    return;
  }
  const actions = state.info.read_only ? null : el("div", { class: "actions" },
    el("button", { id: "act-requeue", class: "primary", disabled: j.state !== "dead", title: "dead jobs only", onclick: () => jobAction(queue, id, "requeue") }, "Requeue"),
    el("button", { id: "act-cancel", class: "danger", disabled: !["pending", "delayed", "active"].includes(j.state), title: "pending, delayed or running jobs", onclick: () => { if (confirm("Cancel job " + id + "?")) jobAction(queue, id, "cancel"); } }, "Cancel"),
    el("button", { id: "act-remove", class: "danger", disabled: j.state === "active", title: "not while a worker holds it", onclick: () => { if (confirm("Remove job " + id + "?")) jobAction(queue, id, "remove"); } }, "Remove"));
  const fields = [
    ["state", stateBadge(j.state)],
    ["kind", j.kind || "–"],
    ["attempts", j.attempts + " of " + j.max_attempts],
    ["priority", j.priority],
    ["backoff", j.backoff + " from " + ms(j.backoff_base_ms)],
    ["added", new Date(j.added_at).toLocaleString() + " (" + ago(j.added_at) + ")"],
    ["timeout", j.timeout_ms ? ms(j.timeout_ms) : "the worker's"],
    ["lane", j.lane || "–"],
    ["unique key", j.unique_key || "–"],
    ["progress", j.progress || "–"],
    ["payload", num(j.payload_size) + " bytes, " + (j.payload_format === "json" ? "JSON" : "shown as hex") + (j.payload_cut ? ", the first 64 KiB shown" : "")],
  ];
  put(
    el("div", { class: "crumbs" }, el("a", { href: "#/" }, "Queues"), " / ", el("a", { href: "#/queue/" + enc(queue) }, queue), " / job"),
    el("h1", {}, "Job " + j.id, stateBadge(j.state), actions),
    message || null,
    el("div", { class: "panel" }, el("dl", { class: "fields", id: "job-fields" },
      ...fields.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-field": k }, v)]))),
    j.last_error ? [el("h2", {}, "Last error"), el("pre", { class: "error", id: "job-error" }, j.last_error)] : null,
    el("h2", {}, "Payload"),
    el("pre", { id: "job-payload", "data-format": j.payload_format }, j.payload_text || "(empty)"),
    el("h2", {}, "Logs (" + j.logs.length + ")"),
    j.logs.length ? el("ol", { class: "logs", id: "job-logs" }, j.logs.map((l) => el("li", {}, l))) : el("div", { class: "empty" }, "No log lines."),
  );
  setStatus("read " + new Date().toLocaleTimeString());
}

async function jobAction(queue, id, action) {
  let msg;
  try {
    await act("queues/" + enc(queue) + "/jobs/" + enc(id) + "/" + action);
    msg = notice(action === "requeue" ? "Requeued: the job is pending again." : action === "cancel" ? "Cancelled: the job is dead, its error \"cancelled\"." : "Removed.");
  } catch (e) {
    msg = notice(action + " failed: " + e.message, true);
  }
  await renderJob(queue, id, msg).catch(showError);
}

// ---- routing and polling ----

function fillSearch() {
  const sel = document.getElementById("search-queue");
  const have = Array.from(sel.options, (o) => o.value);
  if (have.join("\n") === state.queues.join("\n")) return;
  const keep = sel.value;
  sel.replaceChildren(...state.queues.map((n) => el("option", { value: n }, n)));
  if (state.queues.includes(keep)) sel.value = keep;
}

function showError(e) {
  const what = e instanceof APIError && e.status < 500 ? e.message : "Could not read from the dashboard server: " + e.message;
  put(el("div", { class: "crumbs" }, el("a", { href: "#/" }, "Queues")), notice(what, true));
  setStatus("error", true);
}

function decode(part) {
  try {
    return decodeURIComponent(part);
  } catch (_) {
    return part;
  }
}

function route() {
  const h = location.hash.replace(/^#\/?/, "");
  const parts = h.split("/").map(decode);
  if (parts[0] === "queue" && parts.length >= 2) return { render: () => renderQueue(parts[1]), poll: true, queue: parts[1] };
  if (parts[0] === "job" && parts.length >= 3) return { render: () => renderJob(parts[1], parts[2]), poll: false, queue: parts[1] };
  return { render: renderOverview, poll: true };
}

async function show() {
  clearTimeout(state.timer);
  const r = route();
  const here = location.hash;
  try {
    await r.render();
  } catch (e) {
    showError(e);
  }
  if (r.queue) document.getElementById("search-queue").value = r.queue;
  const info = await state.infoP.catch(() => null);
  if (r.poll && info && location.hash === here) {
    clearTimeout(state.timer);
    state.timer = setTimeout(show, Math.max(500, info.sample_ms));
  }
}

function start() {
  state.infoP = api("info").then((info) => {
    state.info = info;
    document.getElementById("where").textContent = info.where;
    document.getElementById("mode").hidden = !info.read_only;
    document.body.dataset.readOnly = info.read_only ? "yes" : "no";
    return info;
  });
  state.infoP.catch(showError);
  document.getElementById("search").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = document.getElementById("search-queue").value;
    const id = document.getElementById("search-id").value.trim();
    if (q && id) location.hash = "#/job/" + enc(q) + "/" + enc(id);
  });
  if (route().render !== renderOverview) {
    // The search box lists the queues on every page.
    api("queues").then((ov) => { state.queues = ov.queues.map((q) => q.name); fillSearch(); }).catch(() => {});
  }
  window.addEventListener("hashchange", show);
  show();
}

start();
