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
const jobsHref = (q, s) => "#/jobs/" + enc(q) + "/" + s;
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
  switch (col) {
    case "completed": return num(q.totals.completed);
    case "rate": return rate(q.completed_per_sec);
    default: return num(q[col]);
  }
}

function colZero(q, col) {
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

  function renderTotals() {
    const t = { pending: 0, delayed: 0, active: 0, dead: 0, cps: 0, fps: 0 };
    for (const q of rows.values()) {
      t.pending += q.pending; t.delayed += q.delayed; t.active += q.active; t.dead += q.dead;
      t.cps += q.completed_per_sec; t.fps += q.failed_per_sec;
    }
    const failRate = t.cps + t.fps > 0 ? (100 * t.fps / (t.cps + t.fps)).toFixed(1) + " %" : "–";
    const values = { pending: num(t.pending), delayed: num(t.delayed), active: num(t.active), dead: num(t.dead), rate: rate(t.cps), failure: failRate };
    if (!totals.firstChild) {
      fill(totals, card("pending", values.pending, "pending"), card("delayed", values.delayed, "delayed"),
        card("active", values.active, "active"), card("dead", values.dead, "dead"),
        card("completed / s", values.rate, "rate"), card("failure rate", values.failure, "failure"));
      return;
    }
    for (const [k, v] of Object.entries(values)) setText(totals.querySelector(`[data-card="${k}"] .n`), v);
  }

  function nameCell(q) {
    return el("td", {}, el("a", { href: queueHref(q.name) }, q.name), " ",
      q.live ? el("span", { class: "badge live", title: "its job events are watched: its counts change as its jobs do" }, "live") : null,
      q.paused ? el("span", { class: "badge paused" }, "paused") : null,
      q.error ? el("span", { class: "badge dead", title: q.error }, "error") : null);
  }

  function rowOf(q) {
    return el("tr", { "data-queue": q.name }, nameCell(q),
      COLS.map((c) => el("td", { class: colZero(q, c) ? "num zero" : "num", "data-col": c },
        c === "dead" && q.dead > 0 ? el("a", { href: jobsHref(q.name, "dead") }, colValue(q, c)) : colValue(q, c))));
  }

  // updateRow changes a row's cells in place, marking those that changed.
  function updateRow(tr, q) {
    const name = tr.firstChild;
    const badges = [q.live, q.paused, !!q.error].join();
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
      head.querySelector("#queue-count").textContent = plural(ov.queues.length, "queue", "queues");
      fill(problem, ov.error ? notice("Finding queues failed: " + ov.error, true) : null);
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
      setStatus("sampled " + new Date(ov.sampled_at).toLocaleTimeString() + ", every " + ms(ov.sample_ms));
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
  const events = el("ol", { class: "events", id: "events" });
  const eventsBox = el("div", { hidden: true }, el("h2", {}, "Recent events"), events);
  let last = null;

  let headKey = "";
  function renderHead(qr) {
    const q = qr.queue;
    const ro = state.info.read_only;
    // Built again only when it changes: a button replaced under the
    // pointer would lose its click.
    const key = [q.paused, qr.live, qr.executor, ro].join();
    if (key === headKey) return;
    headKey = key;
    const actions = ro ? null : el("div", { class: "actions" },
      q.paused
        ? el("button", { id: "act-resume", class: "primary", onclick: () => queueAction("resume") }, "Resume")
        : el("button", { id: "act-pause", onclick: () => queueAction("pause") }, "Pause"),
      el("button", { id: "act-promote", onclick: () => queueAction("promote"), title: "move the delayed jobs that are due to pending" }, "Promote due"));
    fill(head,
      crumbs(q.name),
      el("h1", {}, q.name,
        q.paused ? el("span", { class: "badge paused", id: "paused" }, "paused") : null,
        qr.live ? el("span", { class: "badge live" }, "live") : null,
        el("span", { class: "muted" }, qr.executor + " executor"), actions));
  }

  function renderCounts(q) {
    const values = {};
    for (const [s] of STATES) values[s] = num(countOf(q, s));
    if (!counts.firstChild) {
      fill(counts, STATES.map(([s, label]) => card(label, values[s], s, jobsHref(name, s))),
        card("lanes", num(q.lanes), "lanes"),
        card("rate limit", q.rate_limit ? num(q.rate_limit) + " / " + ms(q.rate_window_ms) : "none", "ratelimit"));
      return;
    }
    for (const [s] of STATES) setText(counts.querySelector(`[data-card="${s}"] .n`), values[s]);
    setText(counts.querySelector(`[data-card="lanes"] .n`), num(q.lanes));
  }

  function renderLifetime(t) {
    fill(lifetime, el("h2", {}, "Lifetime"), el("div", { class: "panel" }, el("dl", { class: "fields" },
      [["added", t.added], ["completed", t.completed], ["failed attempts", t.failed], ["retried", t.retried],
        ["dead-lettered", t.dead], ["leases recovered", t.recovered], ["removed", t.removed], ["requeued", t.requeued],
        ["cancelled", t.cancelled], ["trimmed", t.trimmed]].map(([k, v]) => [el("dt", {}, k), el("dd", { "data-total": k }, num(v))]))));
  }

  function renderLanes(qr) {
    fill(lanes, el("h2", {}, "Lanes" + (qr.lanes_cut ? " (first " + qr.lanes.length + ")" : "")),
      qr.lanes.length === 0
        ? el("div", { class: "empty" }, "No lane has waiting or active jobs.")
        : el("table", { id: "lanes" },
          el("thead", {}, el("tr", {}, el("th", {}, "lane"), ["waiting", "active", "cap"].map((h) => el("th", { class: "num" }, h)), el("th", {}, ""))),
          el("tbody", {}, qr.lanes.map((l) => el("tr", { "data-lane": l.name },
            el("td", {}, l.name),
            el("td", { class: "num", "data-col": "waiting" }, num(l.waiting)),
            el("td", { class: "num", "data-col": "active" }, num(l.active)),
            el("td", { class: "num", "data-col": "cap" }, l.cap ? num(l.cap) : "–"),
            el("td", {}, l.paused ? el("span", { class: "badge paused" }, "paused") : null))))));
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
    nodes: [head, msg, counts, el("h2", {}, "Throughput"), chartBox, el("div", { class: "two" }, lifetime, lanes), eventsBox],
    async refresh() {
      const [qr, series] = await Promise.all([api("queues/" + enc(name)), api("series?queue=" + enc(name)), state.infoP]);
      last = qr;
      renderHead(qr);
      renderCounts(qr.queue);
      fill(chartBox, chart(series.points));
      renderLifetime(qr.queue.totals);
      renderLanes(qr);
      eventsBox.hidden = !qr.live;
      setStatus("read " + new Date().toLocaleTimeString());
    },
    onQueue(p) {
      if (p.queue.name !== name || !last) return;
      renderCounts(p.queue);
      renderLifetime(p.queue.totals);
      eventsBox.hidden = false;
      for (const ev of p.events) events.prepend(eventItem(name, ev));
      while (events.children.length > 30) events.lastChild.remove();
    },
  };
  return view;
}

function eventItem(queue, ev) {
  return el("li", { "data-event": ev.name },
    el("span", { class: "t" }, new Date(ev.at).toLocaleTimeString()),
    el("span", { class: "badge ev-" + ev.name }, ev.name),
    el("a", { href: jobHref(queue, ev.job) }, "job " + ev.job),
    ev.error ? el("span", { class: "err" }, ev.error) : ev.value ? el("span", { class: "muted" }, ev.value) : null);
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

function jobsView(queue, st) {
  if (!SCORE_COL[st]) st = "pending";
  const head = el("div");
  const msg = el("div");
  const tabs = el("nav", { class: "tabs", id: "state-tabs" });
  const toolbar = el("div", { class: "toolbar" });
  const table = el("div", { id: "jobs-box" });
  const pager = el("div", { class: "pager" });
  let counts = null; // the queue's view
  let cursors = [""]; // the cursor of each page read, the current last
  let page = null;
  let found = null; // a search's answer, shown in place of the page
  let newest = !!NEWEST_FIRST[st];
  let lane = ""; // the pending table's lane; "" for the jobs without one
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
  const laneBox = el("span");
  let laneKey = null;
  function renderToolbar() {
    if (!toolbar.firstChild) {
      fill(toolbar,
        el("form", { id: "jobs-search", class: "find", onsubmit: (ev) => { ev.preventDefault(); find(findInput.value.trim()); } },
          findInput, el("button", { type: "submit" }, "Find"), clearBox),
        el("label", { class: "order" }, "order ",
          el("select", { id: "jobs-order", onchange: (ev) => { newest = ev.target.value === "newest"; cursors = [""]; read().catch(showError); } },
            el("option", { value: "oldest", selected: !newest }, st === "pending" ? "next to run first" : "oldest first"),
            el("option", { value: "newest", selected: newest }, st === "pending" ? "last to run first" : "newest first"))),
        laneBox,
        el("div", { class: "actions" }, bulkButtons()));
    }
    if (!!clearBox.firstChild !== !!found) {
      fill(clearBox, found ? el("button", { type: "button", id: "jobs-find-clear", onclick: () => { found = null; findInput.value = ""; read().catch(showError); } }, "Clear") : null);
    }
    const lanes = st === "pending" && page && (page.lanes || lane) ? Array.from(new Set([lane, ...(page.lanes || [])].filter(Boolean))) : null;
    const key = JSON.stringify(lanes);
    if (key === laneKey) return;
    laneKey = key;
    fill(laneBox, lanes ? el("label", { class: "order" }, "lane ",
      el("select", { id: "jobs-lane", onchange: (ev) => { lane = ev.target.value; cursors = [""]; read().catch(showError); } },
        el("option", { value: "" }, "(no lane)"),
        lanes.map((l) => el("option", { value: l, selected: l === lane }, l)))) : null);
  }

  function rowActions(r) {
    if (ro() || !r.state) return null;
    const b = [];
    if (r.state === "dead") b.push(el("button", { class: "small primary", "data-act": "requeue", onclick: () => rowAction(r.id, "requeue") }, "Requeue"));
    if (r.state === "delayed") b.push(el("button", { class: "small primary", "data-act": "retry", onclick: () => rowAction(r.id, "retry") }, "Run now"));
    if (r.state !== "active" && r.state !== "waiting") {
      b.push(el("button", {
        class: "small danger", "data-act": "remove",
        onclick: async () => { if (await ask("Remove job " + r.id + "?", "The job, its logs and its result are deleted.", "Remove", true)) rowAction(r.id, "remove"); },
      }, "Remove"));
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
    fill(table,
      note || null,
      rows.length === 0 && !note
        ? el("div", { class: "empty", id: "jobs-empty" }, "No " + (st === "completed" ? "retained completed" : st) + " jobs.")
        : rows.length === 0 ? null : el("table", { id: "jobs", "data-state": st },
          el("thead", {}, el("tr", {}, el("th", {}, "job"), el("th", {}, label), el("th", { class: "num" }, "attempts"),
            el("th", {}, "lane"), el("th", {}, st === "dead" ? "error" : "payload"), el("th", {}, ""))),
          el("tbody", {}, rows.map((r) => el("tr", { "data-job": r.id },
            el("td", {}, el("a", { href: jobHref(queue, r.id) }, r.id), r.parent ? el("span", { class: "muted" }, " ← " + r.parent) : null),
            el("td", { class: "t" }, r.state ? show(r) : el("span", { class: "muted" }, "gone")),
            el("td", { class: "num" }, r.state ? r.attempts + " / " + r.max_attempts : "–"),
            el("td", {}, r.lane || el("span", { class: "muted" }, "–")),
            el("td", { class: "detail" }, detail(r)),
            el("td", { class: "row-actions" }, rowActions(r)))))));
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
    if (lane && st === "pending") params.set("lane", lane);
    const p = await api("queues/" + enc(queue) + "/jobs?" + params);
    counts = p.queue;
    page = p;
    renderTabs(counts);
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

  async function rowAction(id, action) {
    try {
      await act("queues/" + enc(queue) + "/jobs/" + enc(id) + "/" + action);
      fill(msg, notice({ requeue: "Requeued job " + id + ".", retry: "Job " + id + " runs now.", remove: "Removed job " + id + "." }[action]));
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
    nodes: [head, msg, tabs, toolbar, table, pager],
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

// ---- job ----

function jobView(queue, id) {
  const box = el("div");
  let msg = null;

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
    b.push(el("button", {
      id: "act-remove", class: "danger", disabled: j.state === "active", title: j.state === "active" ? "not while a worker holds it" : "delete the job",
      onclick: async () => { if (await ask("Remove job " + id + "?", "The job, its logs and its result are deleted.", "Remove", true)) jobAction("remove"); },
    }, "Remove"));
    return el("div", { class: "actions" }, b);
  }

  async function jobAction(action) {
    try {
      await act("queues/" + enc(queue) + "/jobs/" + enc(id) + "/" + action);
      msg = notice({ requeue: "Requeued: the job is pending again.", retry: "The job is pending: it runs now.", remove: "Removed.",
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
        j = await api("queues/" + enc(queue) + "/jobs/" + enc(id));
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
  const what = e instanceof APIError && e.status < 500 ? e.message : "Could not read from the dashboard server: " + e.message;
  fill(main, crumbs(), notice(what, true));
  // The next tick tries the address again.
  state.view = { nodes: [], refresh: show };
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
  if (parts[0] === "queue" && parts.length >= 2) return { view: () => queueView(parts[1]), queue: parts[1] };
  if (parts[0] === "jobs" && parts.length >= 3) return { view: () => jobsView(parts[1], parts[2]), queue: parts[1] };
  if (parts[0] === "job" && parts.length >= 3) return { view: () => jobView(parts[1], parts[2]), queue: parts[1] };
  return { view: overviewView };
}

// show builds the view of the address and reads it.
async function show() {
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
