// The trafikey dashboard: four views (overview, queue, job table, job)
// built from the JSON API under api/. A view is built once and then kept
// up to date in place: by the pushes of api/live (server-sent events: a
// tick after every sample, and a queue's counts as soon as its job events
// say it changed), or, while that stream is down, by polling. Every value
// from the server is put in the page as text (textContent), never as
// markup.
"use strict";

const state = { info: null, infoP: null, view: null, queues: [], live: false, poll: null, seq: 0 };
const main = document.getElementById("view");

// el builds an element: el("td", {class: "num"}, "12", child…).
function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  fill(e, children);
  return e;
}

// fill puts children (nested arrays flattened; null, undefined and false
// left out; strings as text) in e, in place of what it held.
function fill(e, ...children) {
  e.replaceChildren(...children.flat(Infinity).filter((c) => c !== undefined && c !== null && c !== false)
    .map((c) => c instanceof Node ? c : document.createTextNode(String(c))));
  return e;
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

// latest orders a view's reads by when they were asked: a call starts a
// read, and the answer (or failure) of one asked before a later call's
// resolves to null. A click or an action reads at once, beside a tick's
// read under way, and that read's older answer must not land over the
// newer one.
function latest() {
  let asked = 0;
  return async (p) => {
    const n = ++asked;
    try {
      const r = await p;
      return n === asked ? r : null;
    } catch (e) {
      if (n === asked) throw e;
      return null;
    }
  };
}

function act(path, params) {
  const q = params ? "?" + new URLSearchParams(params) : "";
  return api(path + q, { method: "POST", headers: { "X-Trafikey-Action": "1", "Accept": "application/json" } });
}

const enc = encodeURIComponent;
const fmt = new Intl.NumberFormat();
const num = (n) => fmt.format(n);
const rate = (r) => r === 0 ? "0" : r >= 100 ? fmt.format(Math.round(r)) : r.toFixed(r >= 10 ? 1 : 2);
const plural = (n, one, many) => num(n) + " " + (n === 1 ? one : many);

function ms(d) {
  if (d < 1000) return d + " ms";
  if (d < 60000) return (d / 1000).toFixed(d % 1000 ? 1 : 0) + " s";
  if (d < 3600000) return (d / 60000).toFixed(d % 60000 ? 1 : 0) + " min";
  if (d < 172800000) return (d / 3600000).toFixed(1) + " h";
  return (d / 86400000).toFixed(1) + " d";
}

// WAIT_BUCKETS is the length of a worker's registered wait counts
// (WorkerInfo.Waited).
const WAIT_BUCKETS = 11;

// latencyText is a job's wait of d ms, as the latency cards and columns
// show it.
function latencyText(d) {
  return d < 1000 ? d + " ms" : (d / 1000).toFixed(1) + " s";
}

function ago(t) {
  const d = Date.now() - new Date(t).getTime();
  if (d < 0) return "in " + ms(Math.round(-d / 1000) * 1000);
  return d < 1000 ? "just now" : ms(Math.round(d / 1000) * 1000) + " ago";
}

function when(t) {
  return el("span", { title: new Date(t).toLocaleString() }, ago(t));
}

function setStatus(text, bad) {
  const s = document.getElementById("status");
  s.textContent = text + (state.live ? " · live" : "");
  s.className = bad ? "bad" : "";
}

// card is a count; with href, a link to its jobs.
function card(label, value, cls, href) {
  const body = [el("div", { class: "n" }, value), el("div", { class: "l" }, label)];
  return href
    ? el("a", { class: "card link " + (cls || ""), "data-card": cls || label, href }, body)
    : el("div", { class: "card " + (cls || ""), "data-card": cls || label }, body);
}

// bump marks a value that changed, for a moment.
function bump(e) {
  e.classList.remove("bump");
  void e.offsetWidth; // restart the animation
  e.classList.add("bump");
}

// setText sets e's text, marking it when it changed.
function setText(e, text) {
  if (!e || e.textContent === text) return;
  e.textContent = text;
  bump(e);
}

// chart draws completed/s and failed/s over the kept samples as SVG.
function chart(points) {
  const box = el("div", { class: "panel" });
  box.append(el("div", { class: "legend" },
    el("span", { class: "completed" }, "completed / s"), el("span", { class: "failed" }, "failed / s")));
  const W = Math.max(320, (main.clientWidth || 900) - 30), H = 180, L = 44, R = 8, T = 8, B = 22;
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

function crumbs(...parts) {
  const out = [el("a", { href: "#/" }, "Queues")];
  for (const p of parts) out.push(" / ", p);
  return el("div", { class: "crumbs" }, out);
}

const queueHref = (q) => "#/queue/" + enc(q);
const jobsHref = (q, s, lane) => "#/jobs/" + enc(q) + "/" + s + (lane ? "/" + enc(lane) : "");
const schedulesHref = (q) => "#/schedules/" + enc(q);
const jobHref = (q, id) => "#/job/" + enc(q) + "/" + enc(id);

// pendingAsk answers the asking whose dialog is open or whose close event
// is not yet dispatched.
let pendingAsk = null;

// ask shows a modal confirmation and resolves to whether the operator
// confirmed; extra holds inputs the caller reads after.
function ask(title, text, okLabel, danger, extra) {
  const dlg = document.getElementById("confirm");
  // An earlier asking closed without an answer yet (its close event comes
  // after this one opens the dialog again) is a no: else the next close
  // would answer both, and one confirmation would act twice.
  if (pendingAsk) pendingAsk(false);
  fill(dlg,
    el("form", { method: "dialog" },
      el("h3", {}, title),
      el("p", {}, text),
      extra || null,
      el("div", { class: "buttons" },
        el("button", { value: "cancel", id: "confirm-cancel" }, "Cancel"),
        el("button", { value: "ok", id: "confirm-ok", class: danger ? "danger solid" : "primary" }, okLabel))));
  dlg.returnValue = "";
  dlg.showModal();
  return new Promise((resolve) => {
    const answer = (yes) => {
      dlg.removeEventListener("close", closed);
      if (pendingAsk === answer) pendingAsk = null;
      resolve(yes);
    };
    const closed = () => {
      if (!dlg.open) answer(dlg.returnValue === "ok");
    };
    pendingAsk = answer;
    dlg.addEventListener("close", closed);
  });
}

// ---- overview ----

const COLS = ["pending", "delayed", "active", "dead", "lanes", "completed", "rate"];

function colValue(q, col) {
  // Counts never read (the queue's read failed) are not zeros.
  if (q.unread) return "–";
  switch (col) {
    case "completed": return num(q.totals.completed);
    case "rate": return rate(q.completed_per_sec);
    default: return num(q[col]);
  }
}

function colZero(q, col) {
  if (q.unread) return true;
  return (col === "completed" ? q.totals.completed : col === "rate" ? q.completed_per_sec : q[col]) === 0;
}

function overviewView() {
  const rows = new Map(); // queue name → its last row
  const head = el("h1", {}, "Queues", el("span", { class: "muted", id: "queue-count" }));
  const problem = el("div");
  const totals = el("div", { class: "cards", id: "totals" });
  const chartBox = el("div");
  const table = el("div");
  let first = true;
  let windows = []; // the failure rates over the last minute and 5 minutes
  // What the page that sent here did (a queue deleted), shown while the
  // address stays (see show).
  const flash = state.flash && state.flash.text;

  function renderTotals() {
    const t = { pending: 0, delayed: 0, active: 0, dead: 0, cps: 0 };
    let read = 0;
    for (const q of rows.values()) {
      if (q.unread) continue;
      read++;
      t.pending += q.pending; t.delayed += q.delayed; t.active += q.active; t.dead += q.dead;
      t.cps += q.completed_per_sec;
    }
    const dash = rows.size > 0 && read === 0; // nothing read: no count to show
    const values = { pending: num(t.pending), delayed: num(t.delayed), active: num(t.active), dead: num(t.dead), rate: rate(t.cps) };
    if (dash) for (const k of Object.keys(values)) values[k] = "–";
    const titles = {};
    for (const [k, [v, title]] of Object.entries(windowValues(windows))) {
      values[k] = v;
      titles[k] = title;
    }
    if (!totals.firstChild) {
      fill(totals, card("pending", values.pending, "pending"), card("delayed", values.delayed, "delayed"),
        card("active", values.active, "active"), card("dead", values.dead, "dead"),
        card("failure rate, 1 min", values["failure-1m"] || "–", "failure-1m"),
        card("failure rate, 5 min", values["failure-5m"] || "–", "failure-5m"),
        card("completed / s", values.rate, "rate"));
    }
    for (const [k, v] of Object.entries(values)) setText(totals.querySelector(`[data-card="${k}"] .n`), v);
    for (const [k, v] of Object.entries(titles)) totals.querySelector(`[data-card="${k}"]`).title = v;
  }

  function nameCell(q) {
    return el("td", {}, el("a", { href: queueHref(q.name) }, q.name), " ",
      partsBadge(q),
      q.live ? el("span", { class: "badge live", title: "its job events are watched: its counts change as its jobs do" }, "live") : null,
      q.paused ? el("span", { class: "badge paused" }, "paused") : null,
      q.error ? el("span", { class: "badge dead", title: q.error + (q.unread ? "" : " (the counts are the last read)") }, q.unread ? "unread" : "error") : null);
  }

  function rowOf(q) {
    return el("tr", { "data-queue": q.name }, nameCell(q),
      COLS.map((c) => el("td", { class: colZero(q, c) ? "num zero" : "num", "data-col": c },
        c === "dead" && q.dead > 0 ? el("a", { href: jobsHref(q.name, "dead") }, colValue(q, c)) : colValue(q, c))));
  }

  // updateRow changes a row's cells in place, marking those that changed.
  function updateRow(tr, q) {
    const name = tr.firstChild;
    const badges = [q.live, q.paused, !!q.error, !!q.unread, q.partitions || 0].join();
    if (name.dataset.badges !== badges) {
      tr.replaceChild(nameCell(q), name);
      tr.firstChild.dataset.badges = badges;
    }
    for (const c of COLS) {
      const td = tr.querySelector(`[data-col="${c}"]`);
      const v = colValue(q, c);
      td.classList.toggle("zero", colZero(q, c));
      if (td.textContent === v) continue;
      fill(td, c === "dead" && q.dead > 0 ? el("a", { href: jobsHref(q.name, "dead") }, v) : v);
      bump(td);
    }
  }

  function renderTable(list) {
    if (list.length === 0) {
      fill(table, el("div", { class: "empty" }, "No queues on this server yet: a queue appears once a producer or worker opens it."));
      return;
    }
    const body = table.querySelector("#queues tbody");
    const have = body ? Array.from(body.rows, (r) => r.dataset.queue) : [];
    if (body && have.join("\n") === list.map((q) => q.name).join("\n")) {
      list.forEach((q, i) => updateRow(body.rows[i], q));
      return;
    }
    fill(table, el("table", { id: "queues" },
      el("thead", {}, el("tr", {}, el("th", {}, "queue"),
        ["pending", "delayed", "active", "dead", "lanes", "completed", "completed / s"].map((h) => el("th", { class: "num" }, h)))),
      el("tbody", {}, list.map(rowOf))));
  }

  return {
    nodes: [head, problem, totals, el("h2", {}, "Throughput, all queues"), chartBox, el("h2", {}, "By queue"), table],
    async refresh() {
      const t0 = performance.now();
      const [ov, series] = await Promise.all([api("queues"), api("series")]);
      state.queues = ov.queues.map((q) => q.name);
      fillSearch();
      rows.clear();
      for (const q of ov.queues) rows.set(q.name, q);
      windows = ov.windows || [];
      fill(problem, flash ? notice(flash) : null, unreachableNotice(ov), ov.error && !ov.unreachable ? notice("Finding queues failed: " + ov.error, true) : null);
      document.body.dataset.server = ov.unreachable ? "unreachable" : "up";
      if (!ov.connected) {
        // Never read: no count to show, not even zeros.
        head.querySelector("#queue-count").textContent = "";
        fill(totals);
        fill(chartBox);
        fill(table);
        setStatus("server unreachable", true);
        return;
      }
      head.querySelector("#queue-count").textContent = plural(ov.queues.length, "queue", "queues");
      totals.classList.toggle("stale", !!ov.unreachable);
      table.classList.toggle("stale", !!ov.unreachable);
      renderTotals();
      fill(chartBox, chart(series.points));
      renderTable(ov.queues);
      // The first overview of a page load, marked for anyone who measures
      // it (the browser's performance panel, the tests).
      if (first && performance.getEntriesByName("trafikey:overview-rendered").length === 0) {
        performance.mark("trafikey:overview-rendered", { detail: { queues: ov.queues.length } });
        performance.measure("trafikey:overview", { start: t0, end: performance.now(), detail: { queues: ov.queues.length } });
      }
      first = false;
      if (ov.unreachable) setStatus("server unreachable", true);
      else setStatus("sampled " + new Date(ov.sampled_at).toLocaleTimeString() + ", every " + ms(ov.sample_ms));
    },
    onQueue(p) {
      const q = p.queue;
      if (!rows.has(q.name)) return;
      rows.set(q.name, q);
      const tr = table.querySelector(`tr[data-queue="${CSS.escape(q.name)}"]`);
      if (tr) updateRow(tr, q);
      renderTotals();
    },
  };
}

// windowValues are the failure-rate cards' values and tooltips of a
// queue's or all queues' windows, by card.
function windowValues(windows) {
  const out = {};
  for (const w of windows || []) {
    out["failure-" + (w.seconds / 60) + "m"] = [
      w.failure_rate === null ? "–" : (100 * w.failure_rate).toFixed(1) + " %",
      plural(w.failed, "failed attempt", "failed attempts") + " and " + plural(w.completed, "completion", "completions") +
        " over the last " + ms(w.span_ms) + (w.span_ms < w.seconds * 1000 - 5000 ? " (the samples kept so far)" : ""),
    ];
  }
  return out;
}

// unreachableNotice says the server cannot be reached, when so.
function unreachableNotice(ov) {
  if (!ov.unreachable) return null;
  const since = ov.unreachable_since ? " since " + new Date(ov.unreachable_since).toLocaleTimeString() : "";
  const text = ov.connected
    ? "The server is unreachable" + since + ": " + ov.unreachable + ". The counts shown are the last read; the dashboard connects again by itself."
    : "The server is unreachable" + since + ": " + ov.unreachable + ". Nothing has been read yet; the dashboard keeps trying to connect.";
  const n = notice(text, true);
  n.id = "unreachable";
  return n;
}

// partsBadge marks a partitioned queue, whose counts are its partitions'
// summed.
function partsBadge(q) {
  if (!q.partitions) return null;
  return el("span", { class: "badge parts", "data-partitions": q.partitions, title: "a partitioned queue: its counts are those of its " + q.partitions + " partitions summed" },
    plural(q.partitions, "partition", "partitions"));
}

// ---- queue ----

const STATES = [
  ["pending", "pending"], ["delayed", "delayed"], ["active", "active"], ["dead", "dead"],
  ["completed", "retained"], ["waiting", "waiting"],
];

function countOf(q, s) {
  return s === "completed" ? q.retained : q[s];
}

function queueView(name) {
  const head = el("div");
  const msg = el("div");
  const counts = el("div", { class: "cards", id: "counts" });
  const chartBox = el("div");
  const lifetime = el("div");
  const lanes = el("div");
  const workers = el("div", { id: "workers-box" });
  const waits = el("div", { id: "waits-box" });
  const parts = el("div", { id: "partitions-box", hidden: true });
  const events = el("ol", { class: "events", id: "events" });
  const eventsBox = el("div", { hidden: true }, el("h2", {}, "Recent events"), events);
  let last = null;
  const fresh = latest();

  let headKey = "";
  function renderHead(qr) {
    const q = qr.queue;
    const ro = state.info.read_only;
    // Built again only when it changes: a button replaced under the
    // pointer would lose its click.
    const key = [q.paused, qr.live, qr.executor, ro, q.partitions || 0].join();
    if (key === headKey) return;
    headKey = key;
    const actions = el("div", { class: "actions" },
      el("a", { id: "schedules-link", href: schedulesHref(q.name) }, "Schedules"),
      ro ? null : [
        q.paused
          ? el("button", { id: "act-resume", class: "primary", onclick: () => queueAction("resume") }, "Resume")
          : el("button", { id: "act-pause", onclick: () => queueAction("pause") }, "Pause"),
        el("button", { id: "act-promote", onclick: () => queueAction("promote"), title: "move the delayed jobs that are due to pending" }, "Promote due"),
        el("button", { id: "act-delete", class: "danger", onclick: deleteQueue, title: "delete the queue and everything it holds" }, "Delete queue…"),
      ]);
    fill(head,
      crumbs(q.name),
      el("h1", {}, q.name,
        q.paused ? el("span", { class: "badge paused", id: "paused" }, "paused") : null,
        qr.live ? el("span", { class: "badge live" }, "live") : null,
        partsBadge(q),
        el("span", { class: "muted" }, qr.executor + " executor"), actions));
  }

  function renderLatency(ms) {
    const c = counts.querySelector(`[data-card="latency"]`);
    if (!c) return;
    setText(c.querySelector(".n"), ms > 0 ? latencyText(ms) : "–");
    c.title = "how long the oldest waiting job (of those without a lane) has waited since it was added";
  }

  function renderCounts(q, windows) {
    const values = {};
    for (const [s] of STATES) values[s] = num(countOf(q, s));
    const rates = windowValues(windows);
    if (!counts.firstChild) {
      fill(counts, STATES.map(([s, label]) => card(label, values[s], s, jobsHref(name, s))),
        card("failure rate, 1 min", "–", "failure-1m"), card("failure rate, 5 min", "–", "failure-5m"),
        card("lanes", num(q.lanes), "lanes"),
        card("latency", "–", "latency"),
        card("rate limit", q.rate_limit ? num(q.rate_limit) + " / " + ms(q.rate_window_ms) : "none", "ratelimit"));
    }
    for (const [s] of STATES) setText(counts.querySelector(`[data-card="${s}"] .n`), values[s]);
    setText(counts.querySelector(`[data-card="lanes"] .n`), num(q.lanes));
    for (const [k, [v, title]] of Object.entries(rates)) {
      setText(counts.querySelector(`[data-card="${k}"] .n`), v);
      counts.querySelector(`[data-card="${k}"]`).title = title;
    }
  }

  function renderLifetime(t) {
    fill(lifetime, el("h2", {}, "Lifetime"), el("div", { class: "panel" }, el("dl", { class: "fields" },
      [["added", t.added], ["completed", t.completed], ["failed attempts", t.failed], ["retried", t.retried],
        ["dead-lettered", t.dead], ["leases recovered", t.recovered], ["removed", t.removed], ["requeued", t.requeued],
        ["cancelled", t.cancelled], ["trimmed", t.trimmed]].map(([k, v]) => [el("dt", {}, k), el("dd", { "data-total": k }, num(v))]))));
  }

  // A partitioned queue's counts by partition and by the node serving
  // them; hidden for a queue never partitioned.
  const PART_COLS = ["pending", "delayed", "active", "dead", "completed"];
  function renderPartitions(q) {
    parts.hidden = !q.partitions;
    if (!q.partitions) return;
    const list = q.partition_list || [], shards = q.shards || [];
    if (!parts.firstChild) {
      fill(parts, el("h2", {}, "Partitions"),
        el("p", { class: "muted" }, "Each partition is an ordinary queue in a hash slot of its own; its node is the primary serving that slot (as of the last discovery). Completed counts the jobs completed ever."),
        el("div", { id: "shards-table", class: "part-table" }), el("div", { id: "partitions-table", class: "part-table" }));
    }
    const numCells = (r) => PART_COLS.map((c) => el("td", { class: r[c] === 0 ? "num zero" : "num", "data-col": c }, num(r[c])));
    updateTable(parts.querySelector("#partitions-table"), "partitions", "By partition", "data-partition",
      [["#", true], ["tag"], ["node"]].concat(PART_COLS.map((c) => [c, true]), [[""]]), list, (p) => String(p.index),
      (p) => [el("td", { class: "num" }, String(p.index)), el("td", { "data-col": "tag" }, p.tag),
        el("td", { "data-col": "node" }, p.node || "–"), numCells(p),
        el("td", { "data-col": "state" }, p.paused ? el("span", { class: "badge paused" }, "paused") : null)]);
    updateTable(parts.querySelector("#shards-table"), "shards", "By node", "data-node",
      [["node"], ["partitions", true]].concat(PART_COLS.map((c) => [c, true])), shards, (s) => s.node,
      (s) => [el("td", { "data-col": "node" }, s.node || "–"), el("td", { class: "num", "data-col": "partitions" }, num(s.partitions)), numCells(s)]);
  }

  // The worker processes on the queue, as they registered (every 5 s).
  function renderWorkers(list) {
    const now = Date.now();
    const ago = (t) => Math.max(0, Math.round((now - Date.parse(t)) / 1000)) + " s ago";
    fill(workers, el("h2", {}, "Workers (" + num(list.length) + ")"),
      list.length === 0
        ? el("p", { class: "muted", id: "no-workers" }, "No worker runs on this queue.")
        : el("table", { id: "workers" },
          el("thead", {}, el("tr", {}, ["worker", "host", "pid", "running", "processed", "failed", "started", "last beat", "jobs"].map((h) => el("th", {}, h)))),
          el("tbody", {}, list.map((w) => el("tr", { "data-worker": w.id },
            el("td", {}, w.id), el("td", {}, w.host), el("td", { class: "num" }, String(w.pid)),
            el("td", { class: "num" }, num(w.running) + " / " + num(w.concurrency)),
            el("td", { class: "num" }, num(w.processed)), el("td", { class: "num" }, num(w.failed)),
            el("td", {}, new Date(w.started).toLocaleTimeString()), el("td", {}, ago(w.beat)),
            el("td", {}, (w.jobs || []).map((id) => el("a", { href: jobHref(name, id) }, id + " "))))))));
  }

  // How long the jobs the running workers started waited to be claimed:
  // their registered counts (WorkerInfo.Waited) summed, bucket i holding
  // the waits under 4^i ms, the last the rest.
  function renderWaits(list) {
    const counts = new Array(WAIT_BUCKETS).fill(0);
    for (const w of list) (w.waited || []).slice(0, WAIT_BUCKETS).forEach((n, i) => { counts[i] += n; });
    const total = counts.reduce((a, b) => a + b, 0);
    const label = (i) => i < WAIT_BUCKETS - 1 ? "< " + latencyText(4 ** i) : "≥ " + latencyText(4 ** (WAIT_BUCKETS - 2));
    // the bucket that holds the p-th quantile: its bound
    const quantile = (p) => {
      let seen = 0;
      for (let i = 0; i < WAIT_BUCKETS; i++) {
        seen += counts[i];
        if (seen >= p * total) return label(i);
      }
      return label(WAIT_BUCKETS - 1);
    };
    const key = JSON.stringify(counts);
    if (waits.dataset.key === key) return;
    waits.dataset.key = key;
    fill(waits, el("h2", {}, "Wait before the first claim"),
      el("p", { class: "muted" }, "Of the jobs added to run at once that the workers running now started: how long each waited from its add to its first claim (server clock). Retries and delayed jobs are not counted; a worker counts waits when its queue has an observer of them (Observer.JobWaited, as trafikeyprom's)."),
      total === 0
        ? el("p", { class: "muted", id: "no-waits" }, "No wait counted yet.")
        : [el("p", { id: "wait-summary" }, plural(total, "job", "jobs") + ": p50 " + quantile(0.5) + ", p95 " + quantile(0.95) + ", p99 " + quantile(0.99)),
          el("table", { id: "waits" },
            el("thead", {}, el("tr", {}, counts.map((_, i) => el("th", { class: "num" }, label(i))))),
            el("tbody", {}, el("tr", {}, counts.map((n, i) => el("td", { class: n === 0 ? "num zero" : "num", "data-bucket": String(i) }, num(n))))))]);
  }

  // The lanes found by name (a lane without jobs is not listed), shown
  // with the listed ones.
  const found = new Map();
  let lanesKey = "";
  const laneFind = el("input", { id: "lane-find", placeholder: "lane name", "aria-label": "find a lane by name" });
  const laneForm = el("form", { id: "lane-search", class: "find", onsubmit: (ev) => { ev.preventDefault(); findLane(laneFind.value.trim()); } },
    laneFind, el("button", { type: "submit" }, "Find lane"));
  const lanesTable = el("div");

  function laneState(l) {
    if (l.paused) return el("span", { class: "badge paused" }, "paused");
    if (l.cap && l.active >= l.cap) return el("span", { class: "badge delayed", title: "as many of its jobs active as its cap: it takes no turn until one ends" }, "at cap");
    return el("span", { class: "badge" }, "running");
  }

  function laneButtons(l) {
    if (state.info.read_only) return null;
    return [
      l.paused
        ? el("button", { class: "small primary", "data-lane-act": "resume", onclick: () => laneAction(l.name, "resume") }, "Resume")
        : el("button", { class: "small", "data-lane-act": "pause", onclick: () => laneAction(l.name, "pause") }, "Pause"),
      el("button", { class: "small", "data-lane-act": "cap", onclick: () => setCap(l) }, l.cap ? "Change cap" : "Set cap"),
      l.cap ? el("button", { class: "small", "data-lane-act": "uncap", onclick: () => laneAction(l.name, "cap", { cap: 0 }) }, "Clear cap") : null,
    ];
  }

  // A lane's latency: the age of its oldest waiting job, "–" when
  // none waits. The API reads it for the listed lanes only; a lane found
  // by name past them has none.
  function setLaneLatency(td, l) {
    if (!l.waiting) td.textContent = "–";
    else if (l.latency_ms === undefined) td.textContent = "";
    else td.textContent = latencyText(l.latency_ms);
    td.title = l.waiting && l.latency_ms === undefined
      ? "not read: a lane's latency is read while it is among the lanes listed"
      : "how long the lane's oldest waiting job has waited since it was added";
  }

  function renderLanes(qr) {
    const list = qr.lanes.slice();
    for (const [n, l] of found) if (!list.some((x) => x.name === n)) list.push(l);
    // The table is built again when a lane changes, not when only the
    // latencies do (they grow at every read): a button replaced under
    // the pointer would lose its click. They are set in place.
    const key = JSON.stringify([list.map(({ latency_ms, ...l }) => l), qr.lanes_cut, state.info.read_only]);
    if (key !== lanesKey || !lanes.firstChild) {
      lanesKey = key;
      fill(lanesTable,
        list.length === 0
          ? el("div", { class: "empty" }, "No lane has waiting or active jobs. Find a paused or capped lane by its name.")
          : el("table", { id: "lanes" },
            el("thead", {}, el("tr", {}, el("th", {}, "lane"), ["waiting", "latency", "active", "cap"].map((h) => el("th", { class: "num" }, h)), el("th", {}, "state"), el("th", {}, ""))),
            el("tbody", {}, list.map((l) => el("tr", { "data-lane": l.name },
              el("td", {}, l.name),
              el("td", { class: "num", "data-col": "waiting" }, l.waiting ? el("a", { href: jobsHref(name, "pending", l.name) }, num(l.waiting)) : "0"),
              el("td", { class: "num", "data-col": "latency" }),
              el("td", { class: "num", "data-col": "active" }, num(l.active)),
              el("td", { class: "num", "data-col": "cap" }, l.cap ? num(l.cap) : "–"),
              el("td", { "data-col": "state" }, laneState(l)),
              el("td", { class: "row-actions" }, laneButtons(l)))))));
      if (!lanes.firstChild) fill(lanes, el("h2", {}, "Lanes"), el("div", { class: "toolbar" }, laneForm), lanesTable);
      lanes.querySelector("h2").textContent = "Lanes" + (qr.lanes_cut ? " (first " + qr.lanes.length + ")" : "");
    }
    const rows = lanesTable.querySelectorAll("#lanes tbody tr");
    list.forEach((l, i) => setLaneLatency(rows[i].querySelector('[data-col="latency"]'), l));
  }

  async function findLane(lane) {
    if (!lane) return;
    try {
      found.set(lane, await api("queues/" + enc(name) + "/lanes/" + enc(lane)));
      fill(msg);
    } catch (e) {
      fill(msg, notice("Find lane " + lane + " failed: " + e.message, true));
    }
    if (last) renderLanes(last);
  }

  async function laneAction(lane, action, params) {
    try {
      const l = await act("queues/" + enc(name) + "/lanes/" + enc(lane) + "/" + action, params);
      if (found.has(lane)) found.set(lane, l);
      fill(msg, notice({
        pause: "Paused lane " + lane + ": its jobs wait until it is resumed.",
        resume: "Resumed lane " + lane + ".",
        cap: l.cap ? "Lane " + lane + " runs at most " + plural(l.cap, "job", "jobs") + " at once." : "Lane " + lane + " has no cap.",
      }[action]));
    } catch (e) {
      fill(msg, notice(action + " of lane " + lane + " failed: " + e.message, true));
    }
    await view.refresh().catch(showError);
  }

  async function setCap(l) {
    const input = el("input", { id: "confirm-cap", type: "number", min: "0", max: "1000000", value: String(l.cap || 1), style: "width: 110px" });
    if (!await ask("Cap of lane " + l.name, "At most this many of the lane's jobs are active at once, across every worker; 0 removes the cap.", "Set cap", false,
      el("label", {}, "most active", input))) return;
    await laneAction(l.name, "cap", { cap: Math.max(0, Math.floor(Number(input.value) || 0)) });
  }

  async function deleteQueue() {
    const typed = el("input", { id: "confirm-name", autocomplete: "off", spellcheck: "false", "aria-label": "the queue's name" });
    const asking = ask("Delete queue " + name + "?",
      "The queue and everything it holds are deleted: its jobs in every state with their logs and results, its lanes, schedules, settings, counters and events. " +
      "Workers still running on it are refused from then on. This cannot be undone. Type the queue's name to confirm.",
      "Delete queue", true, el("label", {}, typed));
    const ok = document.getElementById("confirm-ok");
    ok.disabled = true;
    typed.addEventListener("input", () => { ok.disabled = typed.value !== name; });
    typed.focus();
    if (!await asking || typed.value !== name) return;
    try {
      const r = await act("queues/" + enc(name) + "/delete", { confirm: typed.value });
      state.flash = { hash: "#/", text: "Deleted queue " + name + " (" + plural(r.keys, "key", "keys") + ")." };
      location.hash = "#/";
    } catch (e) {
      fill(msg, notice("Delete failed: " + e.message, true));
    }
  }

  async function queueAction(action) {
    let m;
    try {
      const r = await act("queues/" + enc(name) + "/" + action);
      m = notice(action === "promote" ? "Promoted " + plural(r.promoted, "due job", "due jobs") + "." : (action === "pause" ? "Paused." : "Resumed."));
    } catch (e) {
      m = notice(action + " failed: " + e.message, true);
    }
    fill(msg, m);
    await view.refresh().catch(showError);
  }

  const view = {
    nodes: [head, msg, counts, el("h2", {}, "Throughput"), chartBox, el("div", { class: "two" }, lifetime, lanes), parts, workers, waits, eventsBox],
    async refresh() {
      const got = await fresh(Promise.all([api("queues/" + enc(name)), api("series?queue=" + enc(name)), state.infoP]));
      if (!got) return;
      const [qr, series] = got;
      last = qr;
      renderHead(qr);
      renderCounts(qr.queue, qr.windows);
      renderLatency(qr.latency_ms);
      fill(chartBox, chart(series.points));
      renderLifetime(qr.queue.totals);
      renderPartitions(qr.queue);
      renderLanes(qr);
      renderWorkers(qr.workers || []);
      renderWaits(qr.workers || []);
      eventsBox.hidden = !qr.live;
      setStatus("read " + new Date().toLocaleTimeString());
    },
    onQueue(p) {
      if (p.queue.name !== name || !last) return;
      renderCounts(p.queue, p.queue.windows);
      renderLifetime(p.queue.totals);
      renderPartitions(p.queue);
      eventsBox.hidden = false;
      for (const ev of p.events) events.prepend(eventItem(name, ev));
      while (events.children.length > 30) events.lastChild.remove();
    },
  };
  return view;
}

// updateTable keeps a table (id, caption; headers, each [label, numeric])
// of rows in box, each row keyed by key(row) in attribute attr: built again
// when the rows' keys change, else its cells changed in place, marking
// those whose text changed.
function updateTable(box, id, caption, attr, headers, rows, key, cells) {
  const body = box.querySelector("tbody");
  const have = body ? Array.from(body.rows, (r) => r.getAttribute(attr)).join("\n") : null;
  const rowOf = (r) => el("tr", { [attr]: key(r) }, cells(r));
  if (have !== rows.map(key).join("\n")) {
    fill(box, el("table", { id }, el("caption", {}, caption),
      el("thead", {}, el("tr", {}, headers.map(([h, numeric]) => el("th", { class: numeric ? "num" : null }, h)))),
      el("tbody", {}, rows.map(rowOf))));
    return;
  }
  rows.forEach((r, i) => {
    const tr = body.rows[i];
    for (const [j, td] of Array.from(rowOf(r).cells).entries()) {
      const old = tr.cells[j];
      if (old.textContent === td.textContent) continue;
      tr.replaceChild(td, old);
      bump(td);
    }
  });
}

function eventItem(queue, ev) {
  return el("li", { "data-event": ev.name },
    el("span", { class: "t" }, new Date(ev.at).toLocaleTimeString()),
    el("span", { class: "badge ev-" + ev.name }, ev.name),
    el("a", { href: jobHref(queue, ev.job) }, "job " + ev.job),
    ev.error ? el("span", { class: "err" }, ev.error) : ev.value ? el("span", { class: "muted" }, ev.value) : null);
}

// isFlowParent reports whether a job (a row or a job page's) is a flow's
// parent still waiting for children: removing it removes its flow.
function isFlowParent(j) {
  return j.state === "waiting" || (j.waiting_children || 0) > 0;
}

// askRemove confirms the removal of a job, or of a flow from its parent.
function askRemove(id, flow, waiting) {
  if (!flow) return ask("Remove job " + id + "?", "The job, its logs and its result are deleted.", "Remove", true);
  return ask("Remove job " + id + " with its flow?",
    "Job " + id + " waits for " + (waiting ? plural(waiting, "child", "children") : "its children") + ": it is removed with every job of its flow below it " +
    "(children, and theirs), with their logs and results — all of them or none, at most 1000 jobs; refused while one of them runs.",
    "Remove flow", true);
}

// ---- job tables ----

// The column of a state's score: what the set is ordered by.
const SCORE_COL = {
  pending: ["priority", (r) => String(r.priority)],
  delayed: ["due", (r) => ago(r.at)],
  active: ["lease until", (r) => ago(r.at)],
  dead: ["died", (r) => ago(r.at)],
  completed: ["completed", (r) => ago(r.at)],
  waiting: ["children left", (r) => num(r.waiting_children)],
};

// The order a table starts in: the next to run first for the sets a
// worker takes from, the latest first for the sets jobs end in.
const NEWEST_FIRST = { dead: true, completed: true };

const PAGE = 25;

function jobsView(queue, st, laneArg) {
  if (!SCORE_COL[st]) st = "pending";
  const head = el("div");
  const msg = el("div");
  const tabs = el("nav", { class: "tabs", id: "state-tabs" });
  const toolbar = el("div", { class: "toolbar" });
  const table = el("div", { id: "jobs-box" });
  const pager = el("div", { class: "pager" });
  let counts = null; // the queue's view
  const fresh = latest();
  let cursors = [""]; // the cursor of each page read, the current last
  let page = null;
  let found = null; // a search's answer, shown in place of the page
  let newest = !!NEWEST_FIRST[st];
  const lane = st === "pending" ? laneArg : ""; // the pending table's lane; "" for the jobs without one
  const laneBox = el("div", { id: "lane-summary" });
  let noLane = null; // how many pending jobs have no lane, when read
  let quiet = 0; // when an events-driven read may come next

  const ro = () => state.info.read_only;

  function renderTabs(q) {
    if (!tabs.firstChild) {
      fill(tabs, STATES.map(([s, label]) => el("a", { href: jobsHref(queue, s), class: s === st ? "on" : "", "data-tab": s },
        label, el("span", { class: "count" }, num(countOf(q, s))))));
      return;
    }
    for (const [s] of STATES) setText(tabs.querySelector(`[data-tab="${s}"] .count`), num(countOf(q, s)));
  }

  function bulkButtons() {
    if (ro()) return null;
    if (st === "dead") {
      return [
        el("button", { id: "bulk-requeue", class: "primary", onclick: requeueAll }, "Requeue all dead"),
        el("button", { id: "bulk-remove-old", class: "danger", onclick: removeOld }, "Remove dead older than…"),
      ];
    }
    if (st === "delayed") return el("button", { id: "bulk-promote", class: "primary", onclick: promoteAll }, "Run all now");
    return null;
  }

  // The toolbar is built once; its parts that change (the clear button
  // of a search, the lanes) are filled in place, so typing in it or
  // clicking it is never undone by a refresh.
  const findInput = el("input", { id: "jobs-find", placeholder: "find by id", "aria-label": "find a job by id", inputmode: "numeric" });
  const clearBox = el("span");
  let kind = ""; // the kind the table is filtered to; "" for every job
  const kindInput = el("input", { id: "jobs-kind", placeholder: "kind", "aria-label": "only the jobs of this kind" });
  function renderToolbar() {
    if (!toolbar.firstChild) {
      fill(toolbar,
        el("form", { id: "jobs-search", class: "find", onsubmit: (ev) => { ev.preventDefault(); find(findInput.value.trim()); } },
          findInput, el("button", { type: "submit" }, "Find"), clearBox),
        el("form", { id: "jobs-kind-filter", class: "find", title: "reads pages on until a page of the kind, at most 10,000 jobs examined",
          onsubmit: (ev) => { ev.preventDefault(); kind = kindInput.value.trim(); cursors = [""]; read().catch(showError); } },
          kindInput, el("button", { type: "submit" }, "Filter")),
        el("label", { class: "order" }, "order ",
          el("select", { id: "jobs-order", onchange: (ev) => { newest = ev.target.value === "newest"; cursors = [""]; read().catch(showError); } },
            el("option", { value: "oldest", selected: !newest }, st === "pending" ? "next to run first" : "oldest first"),
            el("option", { value: "newest", selected: newest }, st === "pending" ? "last to run first" : "newest first"))),
        el("div", { class: "actions" }, bulkButtons()));
    }
    if (!!clearBox.firstChild !== !!found) {
      fill(clearBox, found ? el("button", { type: "button", id: "jobs-find-clear", onclick: () => { found = null; findInput.value = ""; read().catch(showError); } }, "Clear") : null);
    }
  }

  // The pending count explained: the jobs without a lane, then each
  // lane's waiting jobs, a click away.
  let laneKey = "";
  function renderLanes(q, p) {
    if (st !== "pending") return;
    if (p.no_lane !== undefined && p.no_lane !== null) noLane = p.no_lane;
    const lanes = p.lanes || [];
    const key = JSON.stringify([lanes, noLane, q.pending, lane, p.lanes_cut]);
    if (key === laneKey) return;
    laneKey = key;
    if (lanes.length === 0 && !lane) return fill(laneBox);
    const inLanes = lanes.reduce((n, l) => n + l.waiting, 0);
    const parts = [num(q.pending) + " pending: "];
    parts.push(noLane === null ? "" : plural(noLane, "job", "jobs") + " without a lane, ");
    parts.push(plural(inLanes, "job", "jobs") + " waiting in " + plural(lanes.length, "lane", "lanes") + (p.lanes_cut ? " (the first " + lanes.length + " lanes)" : "") + ".");
    const row = (l, label, count, extra) => el("tr", { "data-lane-row": l, class: l === lane ? "on" : "" },
      el("td", {}, l === lane ? el("strong", {}, label) : el("a", { href: jobsHref(queue, "pending", l) }, label)),
      el("td", { class: "num" }, count), extra);
    fill(laneBox, el("div", { class: "panel lanes-panel" },
      el("div", { id: "lane-sum" }, parts),
      el("table", { id: "pending-lanes" },
        el("thead", {}, el("tr", {}, el("th", {}, "lane"), el("th", { class: "num" }, "waiting"), el("th", { class: "num" }, "active"), el("th", { class: "num" }, "cap"), el("th", {}, ""))),
        el("tbody", {},
          row("", "(jobs without a lane)", noLane === null ? "–" : num(noLane), [el("td", { class: "num" }, "–"), el("td", { class: "num" }, "–"), el("td")]),
          lanes.map((l) => row(l.name, l.name, num(l.waiting), [
            el("td", { class: "num" }, num(l.active)),
            el("td", { class: "num" }, l.cap ? num(l.cap) : "–"),
            el("td", {}, l.paused ? el("span", { class: "badge paused" }, "paused") : null)]))))));
  }

  function rowActions(r) {
    if (ro() || !r.state) return null;
    const b = [];
    if (r.state === "dead") b.push(el("button", { class: "small primary", "data-act": "requeue", onclick: () => rowAction(r.id, "requeue") }, "Requeue"));
    if (r.state === "delayed") b.push(el("button", { class: "small primary", "data-act": "retry", onclick: () => rowAction(r.id, "retry") }, "Run now"));
    if (r.state !== "active") {
      const flow = isFlowParent(r);
      b.push(el("button", {
        class: "small danger", "data-act": "remove", title: flow ? "delete the job with its whole flow" : "delete the job",
        onclick: async () => { if (await askRemove(r.id, flow, r.waiting_children)) rowAction(r.id, "remove", flow); },
      }, flow ? "Remove flow" : "Remove"));
    }
    return b;
  }

  function detail(r) {
    if (r.error) return el("span", { class: "err", title: r.error_size > r.error.length ? "the first " + r.error.length + " of " + r.error_size + " bytes" : null }, r.error);
    if (r.progress) return el("span", { class: "muted" }, "progress " + r.progress);
    if (r.preview !== undefined && r.preview !== null) return el("span", { class: "mono" }, r.preview + (r.payload_size > r.preview.length ? "…" : ""));
    return el("span", { class: "muted" }, num(r.payload_size) + " bytes");
  }

  let rowsKey = "";
  function renderRows(rows, note) {
    // Built again only when the rows change, for the same reason.
    const key = JSON.stringify(rows) + (note ? note.textContent : "");
    if (key === rowsKey) return;
    rowsKey = key;
    const [label, show] = SCORE_COL[st];
    const caption = lane ? "Lane " + lane + ": its waiting jobs" : st === "pending" && page && page.lanes && page.lanes.length ? "Jobs without a lane" : null;
    fill(table,
      note || null,
      rows.length === 0 && !note
        ? el("div", { class: "empty", id: "jobs-empty" }, emptyText())
        : rows.length === 0 ? null : el("table", { id: "jobs", "data-state": st, "data-lane": lane || null },
          caption ? el("caption", { id: "jobs-caption" }, caption) : null,
          el("thead", {}, el("tr", {}, el("th", {}, "job"), el("th", {}, label), el("th", { class: "num" }, "attempts"),
            el("th", {}, "kind"), el("th", {}, "lane"), el("th", {}, st === "dead" ? "error" : "payload"), el("th", {}, ""))),
          el("tbody", {}, rows.map((r) => el("tr", { "data-job": r.id },
            el("td", {}, el("a", { href: jobHref(queue, r.id) }, r.id), r.parent ? el("span", { class: "muted" }, " ← " + r.parent) : null),
            el("td", { class: "t" }, r.state ? show(r) : el("span", { class: "muted" }, "gone")),
            el("td", { class: "num" }, r.state ? r.attempts + " / " + r.max_attempts : "–"),
            el("td", { class: "kind" }, r.kind || el("span", { class: "muted" }, "–")),
            el("td", {}, r.lane || el("span", { class: "muted" }, "–")),
            el("td", { class: "detail" }, detail(r)),
            el("td", { class: "row-actions" }, rowActions(r)))))));
  }

  function emptyText() {
    if (lane) return "No waiting jobs in lane " + lane + ".";
    const inLanes = st === "pending" && page && page.lanes ? page.lanes.reduce((n, l) => n + l.waiting, 0) : 0;
    if (inLanes > 0) return "No pending jobs without a lane: the " + plural(inLanes, "job waits", "jobs wait") + " in the lanes above.";
    return "No " + (st === "completed" ? "retained completed" : st) + " jobs.";
  }

  let pagerKey = "";
  function renderPager() {
    const at = (cursors.length - 1) * PAGE;
    const key = found || !page ? "" : [at, page.jobs.length, page.total, page.next].join();
    if (key === pagerKey) return;
    pagerKey = key;
    if (!key) return fill(pager);
    fill(pager,
      el("button", { id: "page-prev", disabled: cursors.length <= 1, onclick: () => { cursors.pop(); read().catch(showError); } }, "← Previous"),
      el("span", { class: "muted", id: "page-where" },
        page.jobs.length ? num(at + 1) + "–" + num(at + page.jobs.length) + " of " + num(page.total) : "0 of " + num(page.total)),
      el("button", { id: "page-next", disabled: !page.next, onclick: () => { cursors.push(page.next); read().catch(showError); } }, "Next →"));
  }

  async function read() {
    const params = new URLSearchParams({ state: st, count: PAGE, newest: newest ? "1" : "0" });
    const after = cursors[cursors.length - 1];
    if (after) params.set("after", after);
    if (lane) params.set("lane", lane);
    if (kind) params.set("kind", kind);
    const p = await fresh(api("queues/" + enc(queue) + "/jobs?" + params));
    if (!p) return;
    counts = p.queue;
    page = p;
    renderTabs(counts);
    renderLanes(counts, p);
    if (!found) renderRows(p.jobs);
    renderToolbar();
    renderPager();
    setStatus("read " + new Date().toLocaleTimeString());
  }

  async function find(id) {
    if (!id) { found = null; return read().catch(showError); }
    let note = null, rows = [];
    try {
      const r = await api("queues/" + enc(queue) + "/jobs?" + new URLSearchParams({ state: st, id }));
      rows = r.jobs;
      counts = r.queue;
      renderTabs(counts);
      if (rows.length === 0) {
        note = r.found_state
          ? notice("Job " + id + " is " + r.found_state + ", not " + st + ": ", false)
          : el("div", { class: "empty", id: "jobs-empty" }, "No job " + id + " in queue " + queue + ".");
        if (r.found_state) note.append(el("a", { href: jobsHref(queue, r.found_state) }, "the " + r.found_state + " jobs"), ", ", el("a", { href: jobHref(queue, id) }, "the job"));
      }
    } catch (e) {
      note = notice("Find failed: " + e.message, true);
    }
    found = { id };
    renderRows(rows, note);
    renderToolbar();
    renderPager();
  }

  async function rowAction(id, action, flow) {
    try {
      await act("queues/" + enc(queue) + "/jobs/" + enc(id) + "/" + action);
      fill(msg, notice({ requeue: "Requeued job " + id + ".", retry: "Job " + id + " runs now.", remove: flow ? "Removed job " + id + " with its flow." : "Removed job " + id + "." }[action]));
    } catch (e) {
      fill(msg, notice(action + " of job " + id + " failed: " + e.message, true));
    }
    await view.refresh().catch(showError);
  }

  async function bulk(action, params, done) {
    try {
      const r = await act("queues/" + enc(queue) + "/" + action, params);
      fill(msg, notice(done(r)));
    } catch (e) {
      fill(msg, notice(action + " failed: " + e.message, true));
    }
    cursors = [""];
    await view.refresh().catch(showError);
  }

  async function requeueAll() {
    const n = counts ? counts.dead : 0;
    if (!await ask("Requeue every dead job?", "The " + plural(n, "dead job", "dead jobs") + " of " + queue + " go back to pending, each with its attempts again.", "Requeue all")) return;
    await bulk("requeue-dead", null, (r) => "Requeued " + plural(r.requeued, "dead job", "dead jobs") + ".");
  }

  async function removeOld() {
    const amount = el("input", { id: "confirm-age", type: "number", min: "0", value: "7", style: "width: 80px" });
    const unit = el("select", { id: "confirm-unit" }, [["m", "minutes"], ["h", "hours"], ["d", "days"]].map(([v, l]) => el("option", { value: v, selected: v === "d" }, l)));
    if (!await ask("Remove old dead jobs?", "Every dead job of " + queue + " that died longer ago than this is deleted, with its logs.", "Remove", true,
      el("label", {}, "older than", amount, unit))) return;
    const mult = { m: 60000, h: 3600000, d: 86400000 }[unit.value];
    const age = Math.max(0, Number(amount.value) || 0) * mult;
    await bulk("remove-dead", { older_than_ms: age }, (r) => "Removed " + plural(r.removed, "dead job", "dead jobs") + " older than " + ms(age) + ".");
  }

  async function promoteAll() {
    const n = counts ? counts.delayed : 0;
    if (!await ask("Run every delayed job now?", "The " + plural(n, "delayed job", "delayed jobs") + " of " + queue + " go to pending now, whether they are due or not.", "Run all now")) return;
    await bulk("promote-all", null, (r) => "Moved " + plural(r.promoted, "delayed job", "delayed jobs") + " to pending.");
  }

  const view = {
    nodes: [head, msg, tabs, laneBox, toolbar, table, pager],
    async refresh() {
      await state.infoP;
      if (!head.firstChild) {
        fill(head, crumbs(el("a", { href: queueHref(queue) }, queue), "jobs"),
          el("h1", {}, queue, el("span", { class: "muted" }, "jobs by state")));
      }
      if (found) {
        const r = await api("queues/" + enc(queue) + "/jobs?" + new URLSearchParams({ state: st, id: found.id }));
        counts = r.queue;
        renderTabs(counts);
        return;
      }
      await read();
    },
    onQueue(p) {
      if (p.queue.name !== queue) return;
      counts = p.queue;
      renderTabs(p.queue);
      // The rows follow the events at most every second.
      const now = Date.now();
      if (found || now < quiet) return;
      quiet = now + 1000;
      reread(view, read);
    },
  };
  return view;
}

// ---- schedules ----

function specOf(sc) {
  if (sc.every_ms) return "every " + ms(sc.every_ms);
  return sc.cron + (sc.time_zone ? " (" + sc.time_zone + ")" : " (UTC)");
}

function schedulesView(queue) {
  const head = el("div");
  const msg = el("div");
  const box = el("div", { id: "schedules-box" });
  const fresh = latest();
  let key = "";

  function stateOf(sc) {
    if (sc.paused) return el("span", { class: "badge paused" }, "paused");
    if (sc.finished) return el("span", { class: "badge", title: "past its end, or its limit reached" }, "finished");
    return el("span", { class: "badge live" }, "active");
  }

  function nextCell(sc) {
    if (sc.next_error) return el("span", { class: "err" }, sc.next_error);
    if (sc.next.length === 0) return el("span", { class: "muted" }, "–");
    return el("ol", { class: "next-runs" }, sc.next.map((t, i) =>
      el("li", { title: ago(t) }, i === 0 ? el("strong", {}, new Date(t).toLocaleString()) : new Date(t).toLocaleString())));
  }

  function buttons(sc) {
    if (state.info.read_only) return null;
    return [
      sc.paused
        ? el("button", { class: "small primary", "data-sched-act": "resume", onclick: () => action(sc.id, "resume") }, "Resume")
        : el("button", { class: "small", "data-sched-act": "pause", disabled: sc.finished, onclick: () => action(sc.id, "pause") }, "Pause"),
      el("button", {
        class: "small danger", "data-sched-act": "remove",
        onclick: async () => {
          if (await ask("Remove schedule " + sc.id + "?", "The schedule is deleted: no more jobs are enqueued by it. The jobs it enqueued stay.", "Remove", true)) action(sc.id, "remove");
        },
      }, "Remove"),
    ];
  }

  function render(r) {
    const k = JSON.stringify([r, state.info.read_only]);
    if (k === key) return;
    key = k;
    fill(box,
      r.schedules.length === 0
        ? el("div", { class: "empty", id: "schedules-empty" }, "Queue " + queue + " has no schedules.")
        : el("table", { id: "schedules" },
          el("thead", {}, el("tr", {}, ["schedule", "when", "next occurrences", "taken", "last", "state", ""].map((h) => el("th", { class: h === "taken" ? "num" : null }, h)))),
          el("tbody", {}, r.schedules.map((sc) => el("tr", { "data-schedule": sc.id },
            el("td", { class: "mono" }, sc.id),
            el("td", { class: "mono", "data-col": "spec" }, specOf(sc), sc.jitter_ms ? el("div", { class: "muted" }, "jitter up to " + ms(sc.jitter_ms)) : null),
            el("td", { "data-col": "next" }, nextCell(sc)),
            el("td", { class: "num", "data-col": "count" }, num(sc.count) + (sc.limit ? " of " + num(sc.limit) : "")),
            el("td", { "data-col": "last" }, sc.last ? when(sc.last) : "–"),
            el("td", { "data-col": "state" }, stateOf(sc)),
            el("td", { class: "row-actions" }, buttons(sc)))))),
      r.cut ? el("p", { class: "muted" }, "The first " + r.schedules.length + " schedules are shown.") : null);
  }

  async function action(id, what) {
    try {
      await act("queues/" + enc(queue) + "/schedules/" + enc(id) + "/" + what);
      fill(msg, notice({ pause: "Paused schedule " + id + ": its occurrences meanwhile are skipped.", resume: "Resumed schedule " + id + ".", remove: "Removed schedule " + id + "." }[what]));
    } catch (e) {
      fill(msg, notice(what + " of schedule " + id + " failed: " + e.message, true));
    }
    await view.refresh().catch(showError);
  }

  const view = {
    nodes: [head, msg, box],
    async refresh() {
      await state.infoP;
      if (!head.firstChild) {
        fill(head, crumbs(el("a", { href: queueHref(queue) }, queue), "schedules"),
          el("h1", {}, queue, el("span", { class: "muted" }, "schedules: the next occurrences as the schedule step computes them, in your time zone; a job's jitter comes on top")));
      }
      const r = await fresh(api("queues/" + enc(queue) + "/schedules"));
      if (!r) return;
      render(r);
      setStatus("read " + new Date().toLocaleTimeString());
    },
  };
  return view;
}

// ---- job ----

function jobView(queue, id) {
  const box = el("div");
  let msg = null;
  const fresh = latest();

  function actions(j) {
    if (state.info.read_only) return null;
    const b = [];
    if (j.state === "dead") b.push(el("button", { id: "act-requeue", class: "primary", onclick: () => jobAction("requeue") }, "Requeue"));
    if (j.state === "delayed") b.push(el("button", { id: "act-retry", class: "primary", title: "run it now: to pending", onclick: () => jobAction("retry") }, "Run now"));
    if (["pending", "delayed", "active"].includes(j.state)) {
      b.push(el("button", {
        id: "act-cancel", class: "danger", title: "end it in the dead jobs, cancelled; a running job's worker stops it at its next heartbeat",
        onclick: async () => { if (await ask("Cancel job " + id + "?", "The job ends in the dead jobs with the error \"cancelled\"; it can be requeued.", "Cancel job", true)) jobAction("cancel"); },
      }, "Cancel"));
    }
    const flow = isFlowParent(j);
    b.push(el("button", {
      id: "act-remove", class: "danger", disabled: j.state === "active",
      title: j.state === "active" ? "not while a worker holds it" : flow ? "delete the job with its whole flow" : "delete the job",
      onclick: async () => { if (await askRemove(id, flow, j.waiting_children)) jobAction(flow ? "remove-flow" : "remove"); },
    }, flow ? "Remove flow" : "Remove"));
    return el("div", { class: "actions" }, b);
  }

  async function jobAction(action) {
    try {
      await act("queues/" + enc(queue) + "/jobs/" + enc(id) + "/" + (action === "remove-flow" ? "remove" : action));
      msg = notice({ requeue: "Requeued: the job is pending again.", retry: "The job is pending: it runs now.", remove: "Removed.",
        "remove-flow": "Removed with its flow: the job and every job below it.",
        cancel: "Cancelled: the job is dead, its error \"cancelled\"." }[action]);
    } catch (e) {
      msg = notice(action + " failed: " + e.message, true);
    }
    await view.refresh().catch(showError);
  }

  function resultBlock(j) {
    if (!j.result_text && j.state !== "completed") return null;
    return [el("h2", {}, "Result"), el("pre", { id: "job-result", "data-format": j.result_format || "" }, j.result_text || "(none)")];
  }

  function childrenBlock(j) {
    if (!j.children || j.children.length === 0) return null;
    return [
      el("h2", {}, "Children (" + num(j.children.length) + (j.children_cut ? ", the first shown" : "") + ")"),
      el("table", { id: "job-children" },
        el("thead", {}, el("tr", {}, ["child", "state", "result or error"].map((h) => el("th", {}, h)))),
        el("tbody", {}, j.children.map((c) => el("tr", { "data-child": c.id },
          el("td", {}, el("a", { href: jobHref(queue, c.id) }, c.id)),
          el("td", {}, c.state ? stateBadge(c.state) : el("span", { class: "muted" }, c.completed ? "completed" : "gone")),
          el("td", { class: c.error ? "err" : "mono" }, c.error || c.result_text || "–"))))),
    ];
  }

  const view = {
    nodes: [box],
    async refresh() {
      await state.infoP;
      let j;
      try {
        j = await fresh(api("queues/" + enc(queue) + "/jobs/" + enc(id)));
        if (!j) return;
      } catch (e) {
        if (e.status !== 404) throw e;
        fill(box,
          crumbs(el("a", { href: queueHref(queue) }, queue), "job " + id),
          msg,
          el("div", { class: "empty", id: "job-missing" }, e.code === "not_found" ? "Job " + id + " is not in queue " + queue + ": it completed, was removed, or never existed." : e.message));
        return;
      }
      const fields = [
        ["state", stateBadge(j.state)],
        ["kind", j.kind || "–"],
        ["attempts", j.attempts + " of " + j.max_attempts],
        ["priority", j.priority],
        ["backoff", j.backoff + " from " + ms(j.backoff_base_ms)],
        ["added", [new Date(j.added_at).toLocaleString(), " (", ago(j.added_at), ")"]],
        ["timeout", j.timeout_ms ? ms(j.timeout_ms) : "the worker's"],
        ["lane", j.lane || "–"],
        ["parent", j.parent ? el("a", { href: jobHref(queue, j.parent), id: "job-parent" }, "job " + j.parent) : "–"],
        j.schedule ? ["schedule", j.schedule + (j.scheduled_at ? ", the occurrence of " + new Date(j.scheduled_at).toLocaleString() : "")] : null,
        j.waiting_children ? ["waiting for", plural(j.waiting_children, "child", "children")] : null,
        j.child_failed ? ["failed by", el("a", { href: jobHref(queue, j.child_failed) }, "child " + j.child_failed)] : null,
        ["unique key", j.unique_key || "–"],
        ["progress", j.progress || "–"],
        ["payload", num(j.payload_size) + " bytes, " + (j.payload_format === "json" ? "JSON" : "shown as hex") + (j.payload_cut ? ", the first 64 KiB shown" : "")],
      ].filter(Boolean);
      fill(box,
        crumbs(el("a", { href: queueHref(queue) }, queue), el("a", { href: jobsHref(queue, j.state) }, j.state), "job"),
        el("h1", {}, "Job " + j.id, stateBadge(j.state), actions(j)),
        msg,
        el("div", { class: "panel" }, el("dl", { class: "fields", id: "job-fields" },
          fields.map(([k, v]) => [el("dt", {}, k), el("dd", { "data-field": k }, v)]))),
        j.last_error ? [el("h2", {}, "Last error"), el("pre", { class: "error", id: "job-error" }, j.last_error)] : null,
        el("h2", {}, "Payload"),
        el("pre", { id: "job-payload", "data-format": j.payload_format }, j.payload_text || "(empty)"),
        resultBlock(j),
        childrenBlock(j),
        el("h2", {}, "Logs (" + j.logs.length + ")"),
        j.logs.length ? el("ol", { class: "logs", id: "job-logs" }, j.logs.map((l) => el("li", {}, l))) : el("div", { class: "empty" }, "No log lines."),
      );
      setStatus("read " + new Date().toLocaleTimeString());
    },
    // A job page changes when the job's own events say so; a tick does
    // not read it again.
    onQueue(p) {
      if (p.queue.name !== queue || !p.events.some((e) => e.job === id)) return;
      msg = null;
      reread(view);
    },
    tick: false,
  };
  return view;
}

// ---- routing and live updates ----

function fillSearch() {
  const sel = document.getElementById("search-queue");
  const have = Array.from(sel.options, (o) => o.value);
  if (have.join("\n") === state.queues.join("\n")) return;
  const keep = sel.value;
  fill(sel, state.queues.map((n) => el("option", { value: n }, n)));
  if (state.queues.includes(keep)) sel.value = keep;
}

function showError(e) {
  let what = e instanceof APIError && e.status < 500 ? e.message : "Could not read from the dashboard server: " + e.message;
  const down = e instanceof APIError && e.code === "unreachable";
  if (down) what = "The server is unreachable: " + e.message + ". This page reads it again by itself once it is back.";
  const n = notice(what, true);
  if (down) n.id = "unreachable";
  fill(main, crumbs(), n);
  document.body.dataset.server = down ? "unreachable" : document.body.dataset.server;
  // The next tick tries the address again.
  state.view = { nodes: [], refresh: show };
  setStatus(down ? "server unreachable" : "error", true);
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
  if (parts[0] === "queue" && parts.length >= 2) return { view: () => queueView(parts[1]), queue: parts[1] };
  if (parts[0] === "jobs" && parts.length >= 3) return { view: () => jobsView(parts[1], parts[2], parts[3] || ""), queue: parts[1] };
  if (parts[0] === "schedules" && parts.length >= 2) return { view: () => schedulesView(parts[1]), queue: parts[1] };
  if (parts[0] === "job" && parts.length >= 3) return { view: () => jobView(parts[1], parts[2]), queue: parts[1] };
  return { view: overviewView };
}

// show builds the view of the address and reads it.
async function show() {
  if (state.flash && state.flash.hash !== location.hash) state.flash = null;
  const r = route();
  const v = r.view();
  const seq = ++state.seq;
  state.view = v;
  fill(main, v.nodes);
  v.busy = true;
  try {
    await v.refresh();
  } catch (e) {
    if (seq === state.seq) showError(e);
  } finally {
    v.busy = false;
    if (v.again && state.view === v) {
      v.again = false;
      reread(v);
    }
  }
  if (r.queue) document.getElementById("search-queue").value = r.queue;
}

// refresh reads the view again at a tick.
function refresh() {
  const v = state.view;
  if (v && v.tick !== false) reread(v);
}

// reread reads v again, one read at a time: asked while a read is under
// way, it reads once more after it, since the read may have missed what
// the ask was for.
function reread(v, read) {
  if (v.busy) {
    v.again = true;
    return;
  }
  v.busy = true;
  (read || v.refresh)().catch(showError).finally(() => {
    v.busy = false;
    if (v.again && state.view === v) {
      v.again = false;
      reread(v);
    }
  });
}

// connect opens the live stream; while it is down, the view is polled at
// the sample interval.
function connect(info) {
  const poll = () => {
    clearInterval(state.poll);
    state.poll = setInterval(refresh, Math.max(500, info.sample_ms));
  };
  poll();
  if (typeof EventSource !== "function") return;
  const es = new EventSource("api/live");
  es.addEventListener("hello", () => {
    state.live = true;
    clearInterval(state.poll);
    document.body.dataset.live = "yes";
    // What changed between the view's read and the stream's start came
    // by no push: read it again.
    refresh();
  });
  es.addEventListener("error", () => {
    if (!state.live) return;
    state.live = false;
    document.body.dataset.live = "no";
    poll(); // EventSource connects again by itself meanwhile
  });
  es.addEventListener("tick", refresh);
  es.addEventListener("queue", (m) => {
    const v = state.view;
    if (v && v.onQueue) v.onQueue(JSON.parse(m.data));
  });
}

function start() {
  state.infoP = api("info").then((info) => {
    state.info = info;
    document.getElementById("where").textContent = info.where;
    document.getElementById("mode").hidden = !info.read_only;
    document.body.dataset.readOnly = info.read_only ? "yes" : "no";
    connect(info);
    return info;
  });
  state.infoP.catch(showError);
  document.getElementById("search").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = document.getElementById("search-queue").value;
    const id = document.getElementById("search-id").value.trim();
    if (q && id) location.hash = jobHref(q, id);
  });
  if (route().view !== overviewView) {
    // The search box lists the queues on every page.
    api("queues").then((ov) => { state.queues = ov.queues.map((q) => q.name); fillSearch(); }).catch(() => {});
  }
  window.addEventListener("hashchange", show);
  show();
}

start();
