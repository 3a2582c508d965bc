// dutystat's live page: polls /api/view every second and draws what it
// gets. Every string comes from files any process may have written, so
// text goes in with textContent only.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const unitSeconds = { ns: 1e-9, us: 1e-6, "µs": 1e-6, ms: 1e-3, s: 1 };

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

function num(v, digits) {
  if (v === null || v === undefined) return "-";
  return v.toLocaleString("en-US", { maximumFractionDigits: digits === undefined ? 0 : digits });
}

function bytes(v) {
  if (v === null || v === undefined) return "-";
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return (i === 0 ? v.toFixed(0) : v.toFixed(1)) + " " + units[i];
}

// duration formats a value in seconds as ns, µs, ms or s.
function duration(sec) {
  if (sec === null || sec === undefined) return "-";
  const a = Math.abs(sec);
  if (a === 0) return "0";
  if (a < 1e-6) return (sec * 1e9).toFixed(0) + " ns";
  if (a < 1e-3) return (sec * 1e6).toFixed(a < 1e-5 ? 2 : 1) + " µs";
  if (a < 1) return (sec * 1e3).toFixed(a < 1e-2 ? 2 : 1) + " ms";
  return sec.toFixed(2) + " s";
}

function row(cells) {
  const tr = document.createElement("tr");
  for (const c of cells) {
    const td = el("td", c.text, c.cls);
    tr.appendChild(td);
  }
  return tr;
}

function fill(id, rows) {
  const body = document.querySelector("#" + id + " tbody");
  body.replaceChildren(...rows);
}

function drawMailboxes(v) {
  fill("mailboxes", v.mailboxes.map((m) => {
    const tr = row([
      { text: m.file }, { text: m.name },
      { text: num(m.delivered_rate, 0), cls: "num rate" },
      { text: m.bytes_rate === null ? "-" : bytes(m.bytes_rate) + "/s", cls: "num" },
      { text: bytes(m.depth_bytes), cls: "num" },
      { text: bytes(m.max_depth_bytes), cls: "num" },
      { text: num(m.back_pressure_rate, 1), cls: "num" },
      { text: num(m.back_pressure), cls: "num" },
      { text: num(m.lost), cls: m.lost > 0 ? "num bad" : "num" },
      { text: num(m.refused_closed), cls: "num" },
    ]);
    tr.dataset.mailbox = m.name;
    tr.dataset.file = m.file;
    tr.dataset.delivered = String(m.delivered);
    return tr;
  }));
}

function drawRunners(v) {
  fill("runners", v.runners.map((r) => {
    const tr = row([
      { text: r.file }, { text: r.name },
      { text: r.busy === null ? "-" : (r.busy * 100).toFixed(1) + " %", cls: "num" },
      { text: num(r.cycle_rate, 0), cls: "num" },
      { text: num(r.work_rate, 0), cls: "num" },
      { text: duration(r.longest_cycle_ns * 1e-9), cls: "num" },
      { text: num(r.errors), cls: r.errors > 0 ? "num bad" : "num" },
    ]);
    tr.dataset.runner = r.name;
    tr.dataset.file = r.file;
    tr.dataset.cycles = String(r.cycles);
    return tr;
  }));
}

function drawBridges(v) {
  document.getElementById("bridges-section").hidden = v.bridges.length === 0;
  const ev = (b, k) => (b.events[k] === undefined ? "-" : num(b.events[k]));
  fill("bridges", v.bridges.map((b) => {
    const lost = (b.events["dropped"] || 0) + (b.events["lost-messages"] || 0);
    const tr = row([
      { text: b.file }, { text: b.name }, { text: b.direction },
      { text: ev(b, "published"), cls: "num" }, { text: ev(b, "batched"), cls: "num" },
      { text: ev(b, "delivered"), cls: "num" },
      { text: ev(b, "dropped"), cls: lost > 0 ? "num bad" : "num" },
      { text: ev(b, "lost-messages"), cls: lost > 0 ? "num bad" : "num" },
      { text: ev(b, "rejected"), cls: "num" }, { text: ev(b, "reconnects"), cls: "num" },
    ]);
    tr.dataset.bridge = b.name;
    return tr;
  }));
}

function drawJournals(v) {
  document.getElementById("journals-section").hidden = v.journals.length === 0;
  fill("journals", v.journals.map((j) => row([
    { text: j.name }, { text: bytes(j.committed), cls: "num" }, { text: bytes(j.flush_lag), cls: "num" },
    { text: num(j.readers), cls: "num" }, { text: j.status, cls: j.status === "ok" ? "" : "bad" },
  ])));
}

function drawFiles(v) {
  fill("files", v.files.map((f) => row([
    { text: f.name }, { text: f.kind || "-" }, { text: f.pid ? String(f.pid) : "-" },
    { text: f.owner || "-" }, { text: f.status, cls: f.status === "ok" ? "" : "bad" },
  ])));
}

// The percentile axis: x = log10(1 / (1 - q)), so that 90 %, 99 %,
// 99.9 %, ... are evenly spaced; 100 % is drawn at the axis's end.
const X_MAX = 6;
function xOf(percent) {
  if (percent >= 100) return X_MAX;
  return Math.min(Math.log10(100 / (100 - percent)), X_MAX);
}

function svg(tag, attrs, text) {
  const e = document.createElementNS(SVG, tag);
  for (const k in attrs) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}

function chart(h) {
  const W = 440, H = 220, L = 64, R = 30, T = 10, B = 30;
  const scale = unitSeconds[h.unit] || 1;
  const pts = h.distribution || [];
  const box = el("div", undefined, "chart");
  box.dataset.histogram = h.name;
  box.dataset.file = h.file;
  const title = el("h3", h.file + ": " + h.name + (h.unit ? "" : " (no unit)") + "  —  " + num(h.count) + " values");
  box.appendChild(title);
  const s = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H });
  let xMax = 3;
  for (const p of pts) xMax = Math.max(xMax, Math.ceil(xOf(p.quantile)));
  let yMax = 0;
  for (const p of pts) yMax = Math.max(yMax, p.value);
  if (yMax <= 0) yMax = 1;
  const px = (x) => L + (x / xMax) * (W - L - R);
  const py = (y) => H - B - (y / yMax) * (H - T - B);
  for (let i = 0; i <= xMax; i++) {
    const x = px(i);
    s.appendChild(svg("line", { x1: x, x2: x, y1: T, y2: H - B, class: "grid" }));
    const label = i === 0 ? "0%" : (100 - 100 / Math.pow(10, i)).toFixed(Math.max(i - 2, 0)) + "%";
    s.appendChild(svg("text", { x: x, y: H - B + 14, "text-anchor": "middle" }, label));
  }
  if (pts.length === 0) {
    s.appendChild(svg("text", { x: (L + W - R) / 2, y: (T + H - B) / 2, "text-anchor": "middle" }, "no values recorded yet"));
  }
  for (let i = 0; i <= 4 && pts.length > 0; i++) {
    const v = (yMax * i) / 4;
    const y = py(v);
    s.appendChild(svg("line", { x1: L, x2: W - R, y1: y, y2: y, class: "grid" }));
    s.appendChild(svg("text", { x: L - 4, y: y + 3, "text-anchor": "end" }, h.unit ? duration(v * scale) : num(v)));
  }
  s.appendChild(svg("line", { x1: L, x2: W - R, y1: H - B, y2: H - B, class: "axis" }));
  s.appendChild(svg("line", { x1: L, x2: L, y1: T, y2: H - B, class: "axis" }));
  s.appendChild(svg("text", { x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle" }, "percentile"));
  const line = svg("polyline", {
    points: pts.map((p) => px(xOf(p.quantile)).toFixed(1) + "," + py(p.value).toFixed(1)).join(" "),
  });
  line.dataset.points = String(pts.length);
  s.appendChild(line);
  box.appendChild(s);
  return box;
}

function drawCharts(v) {
  document.getElementById("charts").replaceChildren(...v.histograms.map(chart));
}

async function poll() {
  const state = document.getElementById("state");
  try {
    const resp = await fetch("api/view", { cache: "no-store" });
    if (!resp.ok) throw new Error("HTTP " + resp.status);
    const v = await resp.json();
    document.getElementById("dir").textContent = v.dir;
    document.getElementById("time").textContent = new Date(v.time).toLocaleTimeString();
    drawMailboxes(v);
    drawRunners(v);
    drawBridges(v);
    drawJournals(v);
    drawCharts(v);
    drawFiles(v);
    window.dutystatView = v;
    window.dutystatUpdates = (window.dutystatUpdates || 0) + 1;
    state.textContent = "live";
    state.className = "";
  } catch (e) {
    // An unreachable dutystat is shown on the page, and tried again.
    state.textContent = "dutystat unreachable: " + e.message;
    state.className = "error";
  }
}

poll();
setInterval(poll, 1000);
