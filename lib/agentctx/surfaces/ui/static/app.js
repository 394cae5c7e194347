// agentctx dashboard: Preact + htm, no build step. Every write carries the per-start token header.
// Every control is a native link, button, input or select, so the whole dashboard works from the keyboard.
import { h, render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";

const html = htm.bind(h);
const TOKEN = document.querySelector('meta[name="agentctx-token"]').content;
const START_PROJECT = document.querySelector('meta[name="agentctx-project"]').content;
const VIEWS = ["projects", "records", "graph", "profile", "sessions", "sync"];
const TITLES = { projects: "Projects", records: "Records", graph: "Graph", profile: "Profile", sessions: "Sessions",
  sync: "Sync" };
const TYPES = JSON.parse(document.querySelector('meta[name="agentctx-types"]').content);  // from agentctx.kinds
const COLORS = { ...JSON.parse(document.querySelector('meta[name="agentctx-colours"]').content), file: "#64748b" };  // from agentctx.kinds

async function api(path, body) {
  const init = body === undefined ? {} : {
    method: "POST", headers: { "Content-Type": "application/json", "X-Agentctx-Token": TOKEN },
    body: JSON.stringify(body),
  };
  const res = await fetch(path, init);
  const data = await res.json();
  if (!res.ok) throw new Error(data.error || res.statusText);
  return data;
}

function parseHash() {
  const [view, query] = (location.hash.replace(/^#\/?/, "") || "records").split("?");
  const params = new URLSearchParams(query || "");
  return { view: VIEWS.includes(view) ? view : "records", project: params.get("project") || "" };
}

function useLoad(fn, deps) {
  const [state, setState] = useState({ data: null, error: null });
  const reload = () => fn().then((data) => setState({ data, error: null }), (e) => setState({ data: null, error: e.message }));
  useEffect(() => { setState({ data: null, error: null }); reload(); }, deps);
  return [state, reload];
}

const day = (s) => (s || "").slice(0, 10);
const q = (project) => `project=${encodeURIComponent(project)}`;
const plural = (n, one, many) => `${n.toLocaleString("en")} ${n === 1 ? one : many || one + "s"}`;
const short = (text, n) => (text.length > n ? text.slice(0, n - 1) + "…" : text);
const basename = (path) => path.split("/").pop() || path;

function Hint({ testid, title, children }) {
  return html`<div class="hint" data-testid=${testid}>${title ? html`<p class="hint-title">${title}</p>` : null}${children}</div>`;
}

const Loading = () => html`<p class="muted">loading…</p>`;
const Failed = ({ error }) => html`<div class="error" role="alert">${error}</div>`;

// ---------------------------------------------------------------------------------------------- Projects

function Projects({ projects, choose }) {
  if (!projects.length) {
    return html`<${Hint} testid="projects-empty" title="No projects yet">
      <p>agentctx learns a project the first time Claude Code starts a session in it with the plugin enabled.
        To look around first, build the sample store and open it here: <code>uv run agentctx demo --home /tmp/agentctx-demo</code>,
        then <code>AGENTCTX_HOME=/tmp/agentctx-demo/data uv run agentctx ui</code>.</p></${Hint}>`;
  }
  return html`<table data-testid="projects">
    <caption class="sr">Projects</caption>
    <tr><th scope="col">project</th><th scope="col">folder</th><th scope="col">current records</th>
      <th scope="col">all records</th><th scope="col">sessions</th><th scope="col">CLAUDE.md drift</th><th scope="col">last seen</th></tr>
    ${projects.map((p) => html`<tr key=${p.id} data-testid="project-row">
      <td><a href=${`#/records?${q(p.id)}`} onClick=${() => choose(p.id)}>${p.name}</a></td>
      <td class="muted">${p.root}</td><td>${p.current_records}</td><td>${p.all_records}</td>
      <td><a href=${`#/sessions?${q(p.id)}`}>${p.sessions}</a></td>
      <td data-testid="project-drift"><a href=${`#/sync?${q(p.id)}`}
        title=${p.drift_checked ? "checked against CLAUDE.md now" : "as of the last scan (folder not found here)"}>${
        p.drift ? plural(p.drift, "candidate") : "none"}</a></td>
      <td>${day(p.last_seen)}</td></tr>`)}
  </table>`;
}

// ---------------------------------------------------------------------------------------------- Records

function RecordCard({ rec, project, changed }) {
  const [mode, setMode] = useState(null);
  const [error, setError] = useState(null);
  const forms = useRef(null);
  useEffect(() => {  // an opened form takes the focus (keyboard users land in its first field)
    const first = mode && forms.current && forms.current.querySelector("input, textarea");
    if (first) first.focus();
  }, [mode]);
  const act = (path, body) => api(`/api/records/${rec.id}/${path}?${q(project)}`, body)
    .then(() => { setMode(null); setError(null); changed(); }, (e) => setError(e.message));
  const submit = (path, names) => (ev) => {
    ev.preventDefault();
    const form = ev.target;
    act(path, Object.fromEntries(names.map((n) => [n, form.elements[n].value])));
  };
  const current = !rec.superseded_at;
  const label = short(rec.title, 40);
  return html`<article class=${`rec ${current ? "" : "superseded"}`} data-testid="record" data-id=${rec.id}>
    <div class="title">${rec.pinned ? html`<span class="tag pin">pinned</span>` : null}${rec.title}</div>
    <div class="meta"><span class="tag" style=${`border-color:${COLORS[rec.type] || "#ccc"}`}>${rec.type}</span>${
      rec.scope} · ${rec.confidence} · ${day(rec.valid_from)}
      ${current ? "" : ` → ${day(rec.valid_to)} · ${rec.superseded_by ? `superseded by ${rec.superseded_by}` : "forgotten"}`} · <span class="id">${rec.id}</span></div>
    ${rec.body ? html`<div class="body">${rec.body}</div>` : null}
    ${error ? html`<div class="error" role="alert" data-testid="record-error">${error}</div>` : null}
    ${current ? html`<div class="actions">
      <button data-testid="pin" aria-label=${`${rec.pinned ? "Unpin" : "Pin"} “${label}”`} onClick=${() => act("pin", { on: !rec.pinned })}>${rec.pinned ? "Unpin" : "Pin"}</button>
      <button data-testid="edit" aria-expanded=${mode === "edit"} aria-label=${`Edit “${label}”`} onClick=${() => setMode(mode === "edit" ? null : "edit")}>Edit</button>
      <button data-testid="supersede" aria-expanded=${mode === "supersede"} aria-label=${`Supersede “${label}”`} onClick=${() => setMode(mode === "supersede" ? null : "supersede")}>Supersede</button>
      <button data-testid="forget" aria-expanded=${mode === "forget"} aria-label=${`Forget “${label}”`} onClick=${() => setMode(mode === "forget" ? null : "forget")}>Forget</button>
      <button data-testid="purge" aria-expanded=${mode === "purge"} aria-label=${`Purge “${label}”`} onClick=${() => setMode(mode === "purge" ? null : "purge")}>Purge…</button>
    </div>` : html`<div class="actions">
      <button data-testid="purge" aria-expanded=${mode === "purge"} aria-label=${`Purge “${label}”`} onClick=${() => setMode(mode === "purge" ? null : "purge")}>Purge…</button>
    </div>`}
    <div ref=${forms}>
    ${mode === "edit" ? html`<form class="inline" data-testid="edit-form" onSubmit=${submit("edit", ["title", "body"])}>
      <label>Title <input name="title" value=${rec.title} /></label>
      <label>Body <textarea name="body">${rec.body}</textarea></label>
      <div><button type="submit">Save</button> <button type="button" onClick=${() => setMode(null)}>Cancel</button></div>
    </form>` : null}
    ${mode === "forget" ? html`<div class="inline" role="alertdialog" aria-label="Confirm forgetting" data-testid="forget-confirm">
      <p>Forget “${label}”? It leaves search, the digest and every injection with no replacement; history keeps it.</p>
      <div><button data-testid="forget-yes" onClick=${() => act("forget", { confirm: true })}>Yes, forget it</button> <button type="button" onClick=${() => setMode(null)}>Cancel</button></div>
    </div>` : null}
    ${mode === "purge" ? html`<div class="inline" role="alertdialog" aria-label="Confirm purging" data-testid="purge-confirm">
      <p>Purge “${label}” from disk? It is removed from the store, the search index, the vectors, the digest cache,
        anchors, logs and the team file. This cannot be undone.</p>
      <div><button data-testid="purge-yes" onClick=${() => api(`/api/records/${rec.id}/purge?${q(project)}`, { confirm: true })
        .then((rep) => { setMode(null); changed(purged(rep)); }, (e) => setError(e.message))}>Yes, purge it</button> <button type="button" onClick=${() => setMode(null)}>Cancel</button></div>
    </div>` : null}
    ${mode === "supersede" ? html`<form class="inline" data-testid="supersede-form" onSubmit=${submit("supersede", ["title", "body", "rationale"])}>
      <label>New title <input name="title" placeholder="default: the first sentence of what is true now" /></label>
      <label>What is true now <textarea name="body"></textarea></label>
      <label>Why it changed <input name="rationale" /></label>
      <div><button type="submit">Supersede</button> <button type="button" onClick=${() => setMode(null)}>Cancel</button></div>
    </form>` : null}
    </div>
  </article>`;
}

function purged(rep) {  // what a purge removed, in one sentence (agentctx.forgetting.purge's report)
  const parts = Object.entries(rep.store || {}).filter(([, n]) => n).map(([k, n]) => `${n} ${k.replace(/_/g, " ")}`);
  if (rep.vectors && rep.vectors.removed) parts.push("its vector");
  for (const [kind, n] of Object.entries(rep.files || {})) if (n.changed) parts.push(`${kind.replace(/_/g, " ")} (${n.changed})`);
  if (rep.team_file) parts.push("its block in the team file");
  return `Purged ${rep.id} “${short(rep.title, 60)}”: removed ${parts.join(", ")}.`;
}

const NO_FILTERS = { q: "", type: "", scope: "", status: "current" };

function Records({ project }) {
  const [filters, setFilters] = useState(NO_FILTERS);
  const [text, setText] = useState("");
  const params = () => {
    const p = new URLSearchParams({ project, status: filters.status, limit: "100" });
    if (filters.q) p.set("q", filters.q);
    if (filters.type) p.set("type", filters.type);
    if (filters.scope) p.set("scope", filters.scope);
    return p.toString();
  };
  const [state, reload] = useLoad(() => api(`/api/records?${params()}`), [project, filters]);
  const [notice, setNotice] = useState(null);
  const changed = (msg) => { setNotice(typeof msg === "string" ? msg : null); reload(); };
  const set = (k) => (ev) => setFilters({ ...filters, [k]: ev.target.value });
  const filtered = JSON.stringify(filters) !== JSON.stringify(NO_FILTERS);
  const clear = () => { setText(""); setFilters(NO_FILTERS); };
  const rows = state.data || [];
  return html`<div>
    <form class="filters" role="search" onSubmit=${(ev) => { ev.preventDefault(); setFilters({ ...filters, q: text }); }}>
      <input type="search" data-testid="search" aria-label="Search records (full text)" placeholder="search records (full text)"
        value=${text} onInput=${(ev) => setText(ev.target.value)} />
      <button type="submit" data-testid="search-go">Search</button>
      <select data-testid="filter-type" aria-label="Type" value=${filters.type} onChange=${set("type")}><option value="">all types</option>
        ${TYPES.map((t) => html`<option value=${t}>${t}</option>`)}</select>
      <select data-testid="filter-scope" aria-label="Scope" value=${filters.scope} onChange=${set("scope")}><option value="">project + global</option>
        <option value="project">project</option><option value="global">global</option></select>
      <select data-testid="filter-status" aria-label="Status" value=${filters.status} onChange=${set("status")}>
        ${["current", "superseded", "archived", "all"].map((s) => html`<option value=${s}>${s}</option>`)}</select>
      ${filtered ? html`<button type="button" data-testid="clear-filters" onClick=${clear}>Clear filters</button>` : null}
    </form>
    ${state.error ? html`<${Failed} error=${state.error} />` : null}
    ${notice ? html`<p class="notice" role="status" data-testid="records-notice">${notice}</p>` : null}
    ${!state.data ? html`<${Loading} />` : html`<div data-testid="results" data-count=${rows.length} aria-live="polite">
      <p class="muted">${filters.q ? `${plural(rows.length, "record")} ${rows.length === 1 ? "matches" : "match"} “${filters.q}”`
        : plural(rows.length, `${filters.status === "all" ? "" : filters.status + " "}record`)}${rows.length === 100 ? " (the first 100)" : ""}</p>
      ${!rows.length && filtered ? html`<${Hint} testid="records-none-match" title="No records match these filters">
          <p>Try other words or another status (superseded facts are under “superseded”), or <button type="button"
            class="link" onClick=${clear}>clear the filters</button>.</p></${Hint}>` : null}
      ${!rows.length && !filtered ? html`<${Hint} testid="records-empty" title="No records in this project yet">
          <p>Records are the facts agentctx keeps for Claude: decisions, conventions, preferences, discoveries, bugfixes,
            handovers. They arrive three ways:</p>
          <ul><li>in a Claude Code session, say it: “remember that we deploy with Helm” (Claude stores it with
              <code>ctx_record</code>), or run <code>/agentctx:ctx-record …</code>;</li>
            <li>from a shell in the project: <code>agentctx record --type decision --title "Deploy with Helm charts"</code>;</li>
            <li>on their own: at the end of each turn agentctx extracts decisions and preferences from the session
              (with an <code>ANTHROPIC_API_KEY</code>; without one, the sentences you state outright).</li></ul></${Hint}>` : null}
      ${rows.map((r) => html`<${RecordCard} key=${r.id + r.updated_at + r.pinned} rec=${r} project=${project} changed=${changed} />`)}
    </div>`}
  </div>`;
}

// ---------------------------------------------------------------------------------------------- Graph

function nodeColor(n) {
  return (n.kind === "record" ? COLORS[n.type] || "#333" : COLORS.file) + (n.current ? "" : "80");
}

const LABEL_PX = 11;  // label text height on screen, at any zoom
const FIT_PADDING = 48;  // px kept free around the drawing when it is zoomed to fit

function drawNode(n, ctx, scale) {
  const r = n.kind === "record" ? 6 : 4;
  ctx.beginPath();
  if (n.kind === "record") ctx.arc(n.x, n.y, r, 0, 2 * Math.PI);
  else ctx.rect(n.x - r, n.y - r, 2 * r, 2 * r);  // files and other entities: squares
  ctx.fillStyle = nodeColor(n);
  ctx.fill();
  if (n.pinned || n.folded) {  // pinned: a gold ring; a folded chain of versions: a double ring
    ctx.lineWidth = 2 / scale;
    ctx.strokeStyle = n.pinned ? "#a16207" : nodeColor(n);
    if (n.folded) { ctx.beginPath(); ctx.arc(n.x, n.y, r + 3 / scale + 1, 0, 2 * Math.PI); }
    ctx.stroke();
  }
}

function labelText(n, many) {
  if (n.kind !== "record") return basename(n.label);
  return short(n.label, many ? 22 : 34) + (n.folded ? ` (+${n.folded} older)` : "");
}

// Which labels come first when there is no room for all: pinned records and folded chains, current records with the most links, files
// with the most links, superseded versions last.
function labelOrder(nodes, links) {
  const degree = {};
  for (const l of links) for (const end of [l.source, l.target]) {
    const id = typeof end === "object" ? end.id : end;
    degree[id] = (degree[id] || 0) + 1;
  }
  const rank = (n) => (n.pinned || n.folded ? 0 : n.kind === "record" ? (n.current ? 1 : 3) : 2);
  return [...nodes].sort((a, b) => rank(a) - rank(b) || (degree[b.id] || 0) - (degree[a.id] || 0));
}

// Labels are drawn after every node, each where it overlaps no label drawn before it, no other node's mark and
// not the canvas edge: below a record or above a file first, then on the other side, else not at all (hover
// shows every name). ``window.__agentctxLabels`` keeps what was drawn, in screen pixels, for the tests.
function drawLabels(graph, ctx, scale, width, height) {
  const { nodes, links } = graph.graphData();
  const size = LABEL_PX / scale;
  const pad = 2 / scale;
  const many = nodes.length > 120;
  const marks = nodes.map((n) => ({ n, ...graph.graph2ScreenCoords(n.x, n.y) }));
  const placed = [];
  const free = (box) => box.x0 >= 0 && box.y0 >= 0 && box.x1 <= width && box.y1 <= height
    && !placed.some((p) => box.x0 < p.x1 && p.x0 < box.x1 && box.y0 < p.y1 && p.y0 < box.y1);
  const clearOfMarks = (box, own) => !marks.some((m) => m.n !== own && m.x > box.x0 - 3 && m.x < box.x1 + 3
    && m.y > box.y0 - 3 && m.y < box.y1 + 3);
  ctx.textAlign = "center";
  ctx.textBaseline = "top";
  for (const n of labelOrder(nodes, links)) {
    const text = labelText(n, many);
    ctx.font = `${n.kind === "record" ? "" : "italic "}${size}px system-ui, sans-serif`;
    const w = ctx.measureText(text).width;
    const r = (n.kind === "record" ? 6 : 4) + (n.folded ? 4 : 0);
    const below = n.y + r + pad, above = n.y - r - pad - size - pad;
    const tops = n.kind === "record" ? [below, above] : [above, below];
    for (const top of tops) {
      const a = graph.graph2ScreenCoords(n.x - w / 2 - pad, top - pad);
      const b = graph.graph2ScreenCoords(n.x + w / 2 + pad, top + size + pad);
      const box = { x0: a.x, y0: a.y, x1: b.x, y1: b.y, id: n.id, text };
      if (!free(box) || !clearOfMarks(box, n)) continue;
      placed.push(box);
      ctx.fillStyle = "rgba(255,255,255,0.85)";
      ctx.fillRect(n.x - w / 2 - pad, top - pad, w + 2 * pad, size + 2 * pad);
      ctx.fillStyle = n.current ? "#1d2330" : "#6b7280";
      ctx.fillText(text, n.x, top);
      if (!n.current) {  // a superseded version: struck through
        ctx.beginPath();
        ctx.moveTo(n.x - w / 2, top + size / 2);
        ctx.lineTo(n.x + w / 2, top + size / 2);
        ctx.lineWidth = 1 / scale;
        ctx.strokeStyle = "#6b7280";
        ctx.stroke();
      }
      break;
    }
  }
  window.__agentctxLabels = placed;
}

// Pulls every node towards the horizontal middle line, so a large graph spreads into the canvas's wide shape
// instead of a disc that leaves its sides empty.
function flatten(strength) {
  let nodes = [];
  const force = (alpha) => { for (const n of nodes) n.vy -= n.y * strength * alpha; };
  force.initialize = (all) => { nodes = all; };
  return force;
}

// Nodes keep this far apart (graph units), so marks do not cover each other and labels find room.
function collide(radius) {
  let nodes = [];
  const force = (alpha) => {
    for (let i = 0; i < nodes.length; i++) {
      for (let j = i + 1; j < nodes.length; j++) {
        const a = nodes[i], b = nodes[j];
        let dx = b.x + b.vx - a.x - a.vx, dy = b.y + b.vy - a.y - a.vy;
        const min = radius(a) + radius(b);
        let d2 = dx * dx + dy * dy;
        if (d2 >= min * min) continue;
        if (d2 === 0) { dx = (j - i) * 1e-3; dy = 1e-3; d2 = dx * dx + dy * dy; }
        const d = Math.sqrt(d2), push = ((min - d) / d) * 0.5 * Math.max(alpha, 0.3);
        a.vx -= dx * push; a.vy -= dy * push; b.vx += dx * push; b.vy += dy * push;
      }
    }
  };
  force.initialize = (all) => { nodes = all; };
  return force;
}

const HTML_ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };
const escapeHtml = (text) => String(text).replace(/[&<>"']/g, (ch) => HTML_ESCAPES[ch]);

function GraphLists({ data }) {
  const byId = Object.fromEntries(data.nodes.map((n) => [n.id, n]));
  const files = data.nodes.filter((n) => n.kind !== "record").sort((a, b) => a.label.localeCompare(b.label));
  const recordsOf = (id) => data.links.filter((l) => l.rel === "applies_to" && l.target === id).map((l) => byId[l.source]);
  const chains = data.links.filter((l) => l.rel === "supersedes");
  return html`<div class="lists">
    <section data-testid="graph-files"><h3>Files and the records that apply to them</h3>
      ${files.length ? html`<ul>${files.map((f) => html`<li><code>${f.label}</code>: ${recordsOf(f.id).map((r, i) =>
        html`${i ? "; " : ""}<span class=${r.current ? "" : "old"}>${r.label}</span>`)}</li>`)}</ul>`
        : html`<p class="muted">No record is linked to a file yet.</p>`}</section>
    <section data-testid="graph-chains"><h3>Supersessions (newer ← older)</h3>
      ${chains.length ? html`<ul>${chains.map((l) => html`<li>${byId[l.source].label} <span class="muted">←</span> <span
        class="old">${byId[l.target].label}</span></li>`)}</ul>`
        : html`<p class="muted">No fact has been superseded yet.</p>`}</section>
  </div>`;
}

function Graph({ project }) {
  const el = useRef(null);
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    api(`/api/graph?${q(project)}`).then(setData, (e) => setError(e.message));
  }, [project]);
  useEffect(() => {
    if (!data || !data.nodes.length || !window.ForceGraph || !el.current) return undefined;
    const many = data.nodes.length > 120;
    const width = el.current.clientWidth, height = many ? 860 : 560;
    let fitted = false;
    window.__agentctxGraphFitted = false;
    const graph = window.ForceGraph()(el.current)
      .width(width).height(height)
      .graphData({ nodes: data.nodes.map((n) => ({ ...n })), links: data.links.map((l) => ({ ...l })) })
      .nodeLabel((n) => escapeHtml(`${n.kind === "record" ? n.type : n.kind}: ${n.label}${
        n.folded ? ` (and ${n.folded} older versions)` : ""}`))  // force-graph sets it as HTML
      .nodeCanvasObject((n, ctx, scale) => drawNode(n, ctx, scale))
      .onRenderFramePost((ctx, scale) => drawLabels(graph, ctx, scale, width, height))
      .nodePointerAreaPaint((n, color, ctx) => { ctx.fillStyle = color; ctx.beginPath(); ctx.arc(n.x, n.y, 8, 0, 2 * Math.PI); ctx.fill(); })
      .linkColor((l) => (l.rel === "supersedes" ? "#b42318" : l.rel === "applies_to" ? "#94a3b8" : "#0e8a6a"))
      .linkWidth((l) => (l.rel === "supersedes" ? 2 : 1))
      .linkLineDash((l) => (l.rel === "applies_to" ? null : l.rel === "supersedes" ? null : [3, 2]))
      .linkDirectionalArrowLength((l) => (l.rel === "supersedes" ? 6 : 0))
      .linkDirectionalArrowRelPos(1)
      .d3VelocityDecay(0.3)
      .cooldownTicks(300).cooldownTime(120000)  // a fixed number of steps: the same layout on a slow machine
      .onEngineStop(() => {
        if (fitted) return;
        fitted = true;
        graph.zoomToFit(0, FIT_PADDING);  // every mark inside the canvas, with room for the labels at its edge
        requestAnimationFrame(() => requestAnimationFrame(() => { window.__agentctxGraphFitted = true; }));
      });
    // repulsion only between near neighbours keeps unconnected records near the middle; the collision force
    // keeps marks apart
    graph.d3Force("charge").strength(many ? -60 : -120).distanceMax(many ? 120 : 160);
    graph.d3Force("link").distance((l) => (l.rel === "applies_to" ? 70 : 90));
    graph.d3Force("collide", collide((n) => (n.kind === "record" ? 14 : 11)));
    if (many) graph.d3Force("flatten", flatten(0.008));
    window.__agentctxGraph = graph;
    return () => { graph._destructor && graph._destructor(); };
  }, [data]);
  if (error) return html`<${Failed} error=${error} />`;
  if (!data) return html`<${Loading} />`;
  const records = data.nodes.filter((n) => n.kind === "record");
  const files = data.nodes.filter((n) => n.kind !== "record");
  const supersessions = data.links.filter((l) => l.rel === "supersedes").length;
  const fileLinks = data.links.filter((l) => l.rel === "applies_to").length;
  if (!records.length) {
    return html`<${Hint} testid="graph-empty" title="Nothing to draw yet: this project has no records">
      <p>The graph shows the project's records, the files they apply to and which facts replaced which.
        Add a record first (see the Records page); it appears here as a dot.</p></${Hint}>`;
  }
  return html`<div>
    <p class="legend"><span data-testid="graph-info">${plural(records.length, "record")} (${plural(records.filter((n) => !n.current).length, "superseded version")}), ${
      plural(files.length, "file")}, ${plural(supersessions, "supersession")}, ${plural(fileLinks, "file link")}</span>${
      data.shown_records < data.current_records ? html` <span class="muted">(the ${data.shown_records} newest of ${data.current_records} current records)</span>` : null}</p>
    <p class="legend" aria-hidden="true">${Object.entries(COLORS).filter(([k]) => k !== "file").map(([k, c]) => html`<span><i class="dot" style=${`background:${c}`}></i>${k}</span>`)}
      <span><i class="dot square" style=${`background:${COLORS.file}`}></i>file</span>
      <span><i class="line red"></i>supersedes (arrow: newer → older, older struck through)</span>
      <span><i class="line grey"></i>applies to a file</span></p>
    ${!supersessions && !fileLinks ? html`<${Hint} testid="graph-no-links" title="No links yet: the records are drawn on their own">
      <p>A record is linked to files when Claude stores it with <code>ctx_record(…, files=[…])</code> and when agentctx
        captures a test run or an error in a file; a supersession appears when a fact changes (Supersede on the
        Records page, <code>agentctx supersede ID --body "…"</code>, or Claude's <code>ctx_supersede</code>).</p></${Hint}>` : null}
    ${data.nodes.length > 120 ? html`<p class="legend muted">Names are shown where they fit; hover a mark for its name,
      scroll to zoom in for more.</p>` : null}
    <div id="graph" ref=${el} data-testid="graph" role="img"
      aria-label=${`Graph of ${plural(records.length, "record")} and ${plural(files.length, "file")}; the same links are listed below.`}></div>
    <${GraphLists} data=${data} />
  </div>`;
}

// ---------------------------------------------------------------------------------------------- Profile

function Profile({ project }) {
  const [state] = useLoad(() => api(`/api/profile?${q(project)}`), [project]);
  if (state.error) return html`<${Failed} error=${state.error} />`;
  if (!state.data) return html`<${Loading} />`;
  const { preferences, project: facts } = state.data;
  return html`<div data-testid="profile">
    <h3>This project</h3>
    ${facts.length ? html`<table data-testid="profile-facts"><caption class="sr">Project profile</caption>
      <tr><th scope="col">what</th><th scope="col">value</th><th scope="col">key</th><th scope="col">kept as</th><th scope="col">since</th></tr>
      ${facts.map((r) => html`<tr data-testid="profile-fact"><td>${r.title}</td><td class="value"><code>${r.body || "(no value)"}</code></td>
        <td class="muted">${r.key || ""}</td><td class="muted">${r.confidence === "explicit" ? "recorded by you" : r.confidence}</td>
        <td class="muted">${day(r.valid_from)}</td></tr>`)}</table>`
      : html`<${Hint} testid="profile-facts-empty" title="Nothing detected for this project yet">
          <p>agentctx reads the stack and the build, test, lint, format, type-check and run commands from pyproject.toml,
            package.json, Cargo.toml, go.mod, Makefile, justfile … when its MCP server starts in a Claude Code session here
            (or when Claude calls <code>ctx_project</code>). To set one yourself:
            <code>agentctx record --type profile --key profile.test_command --title "Test command" --body "make test"</code>.</p></${Hint}>`}
    <h3>Developer profile (your preferences in every project)</h3>
    ${preferences.length ? preferences.map((r) => html`<article class="rec" data-testid="preference">
      <div class="title">${r.title}</div><div class="meta">${r.confidence} · stated ${plural(r.reinforce_count || 1, "time")} · since ${day(r.recorded_at)}</div>
      ${r.body ? html`<div class="body">${r.body}</div>` : null}</article>`)
      : html`<${Hint} testid="preferences-empty" title="No cross-project preferences yet">
          <p>Preferences you state in any project (“I always write tests first”) are kept once and shown to Claude
            everywhere after they are stated explicitly or reinforced in 3 sessions. Add one:
            <code>agentctx record --type preference --scope global --title "Prefer small pure functions"</code>.</p></${Hint}>`}
  </div>`;
}

// ---------------------------------------------------------------------------------------------- Sessions

function BarChart({ rows, value, label, format, testid }) {
  const W = 900, H = 200, left = 70, right = 20, top = 28, bottom = 28;
  const max = Math.max(...rows.map(value));
  const bw = (W - left - right) / Math.max(rows.length, 1);
  const y = (v) => top + (H - top - bottom) * (1 - v / max);
  return html`<figure class="chart-box"><svg class="chart" data-testid=${testid} viewBox=${`0 0 ${W} ${H}`} width="100%" role="img"
      aria-label=${`${label}: highest ${format(max)}`}>
    <text x=${left} y="16" class="chart-title">${label}</text>
    <line x1=${left} y1=${y(max)} x2=${W - right} y2=${y(max)} class="grid" />
    <text x=${left - 6} y=${y(max) + 4} text-anchor="end">${format(max)}</text>
    <line x1=${left} y1=${y(0)} x2=${W - right} y2=${y(0)} class="axis" />
    <text x=${left - 6} y=${y(0) + 4} text-anchor="end">${format(0)}</text>
    ${rows.map((r, i) => {
      const v = value(r);
      return html`<rect data-testid="bar" x=${left + i * bw + 1} y=${y(v)} width=${Math.max(bw - 2, 1)} height=${y(0) - y(v)} fill="#2f6fde">
        <title>${day(r.started_at)} ${r.session_id}: ${format(v)}</title></rect>`;
    })}
    ${rows.length ? html`<text x=${left} y=${H - 8}>${day(rows[0].started_at)}</text>
      <text x=${W - right} y=${H - 8} text-anchor="end">${day(rows[rows.length - 1].started_at)}</text>` : null}
  </svg></figure>`;
}

function Sessions({ project }) {
  const [state] = useLoad(() => api(`/api/sessions?${q(project)}`), [project]);
  if (state.error) return html`<${Failed} error=${state.error} />`;
  if (!state.data) return html`<${Loading} />`;
  const rows = state.data;
  if (!rows.length) {
    return html`<div data-testid="sessions" data-count="0"><${Hint} testid="sessions-empty" title="No sessions yet">
      <p>A session is recorded each time Claude Code starts in this project with the plugin enabled: how many tokens
        agentctx injected and what extracting its decisions cost. Start one with <code>claude</code> in the project folder.</p></${Hint}></div>`;
  }
  const total = rows.reduce((s, r) => s + (r.extraction_cost_usd || 0), 0);
  const tokens = rows.reduce((s, r) => s + (r.tokens_injected || 0), 0);
  const runs = rows.reduce((s, r) => s + (r.extraction_runs || 0), 0);
  const usd = (v) => `$${v.toFixed(4)}`;
  return html`<div data-testid="sessions" data-count=${rows.length}>
    <p data-testid="sessions-summary">${plural(rows.length, "session")} · ${plural(tokens, "token")} injected · ${
      plural(runs, "extraction run")} · extraction cost ${usd(total)}</p>
    ${tokens ? html`<${BarChart} rows=${rows} value=${(r) => r.tokens_injected || 0} label="Tokens injected per session"
        format=${(v) => v.toLocaleString("en")} testid="chart-tokens" />`
      : html`<${Hint} testid="tokens-none" title="No tokens injected yet"><p>These sessions were given no records: the store was
          empty for this project when they started.</p></${Hint}>`}
    ${total > 0 ? html`<${BarChart} rows=${rows} value=${(r) => r.extraction_cost_usd || 0} label="Extraction cost per session (USD)"
        format=${usd} testid="chart-cost" />`
      : html`<${Hint} testid="cost-none" title="Extraction cost: $0 in every session">
          <p>${runs ? "Extraction ran without a model (no ANTHROPIC_API_KEY, or agentctx config --no-llm): only sentences you stated outright were captured, at no cost."
            : "No extraction has run in these sessions yet."} With a key, Claude Haiku extracts decisions at the end of each turn and its cost is charted here.</p></${Hint}>`}
    <table><caption class="sr">Sessions</caption>
      <tr><th scope="col">started</th><th scope="col">session</th><th scope="col">tokens injected</th><th scope="col">injections</th>
        <th scope="col">extraction runs</th><th scope="col">cost</th></tr>
      ${rows.slice().reverse().map((r) => html`<tr><td>${(r.started_at || "").slice(0, 16).replace("T", " ")}</td><td class="muted">${r.session_id}</td>
        <td>${r.tokens_injected}</td><td>${r.injections}</td><td>${r.extraction_runs}</td><td>${usd(r.extraction_cost_usd || 0)}</td></tr>`)}
    </table>
  </div>`;
}

// ---------------------------------------------------------------------------------------------- Sync

function Diff({ text }) {
  return html`<pre class="diff" data-testid="diff">${text.split("\n").map((line) => html`<div
    class=${line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : ""}>${line || " "}</div>`)}</pre>`;
}

function struck(line) {
  const m = /^~~(.*?)~~(.*)$/.exec(line);
  return m ? html`<s>${m[1]}</s>${m[2]}` : line;
}

function DriftTable({ rows }) {
  return html`<table><caption class="sr">Drift candidates</caption>
    <tr><th scope="col">score</th><th scope="col">kind</th><th scope="col">record</th><th scope="col">detail</th></tr>
    ${rows.map((c) => html`<tr data-testid="drift-row"><td>${Number(c.score).toFixed(2)}</td><td>${c.kind}</td>
      <td>${c.type ? html`<span class="tag">${c.type}</span>` : null}${c.title || c.record_id}</td><td class="muted">${c.detail}</td></tr>`)}</table>`;
}

function SyncStatus({ prop }) {
  const n = prop.candidates.length;
  if (!prop.exists && !n) {
    return html`<${Hint} testid="drift-none" title="There is no CLAUDE.md, and nothing to put in one yet">
      <p>No CLAUDE.md in this project (${prop.path}), and no settled decision or convention to propose for it: only those
        you stated yourself or that were reinforced across sessions are proposed. Record one
        (<code>agentctx record --type decision --title "…"</code>) and it appears here as a proposed line;
        <code>agentctx sync</code> then writes CLAUDE.md after asking.</p></${Hint}>`;
  }
  if (!prop.exists) {
    return html`<p data-testid="drift-summary">There is no CLAUDE.md yet (${prop.path}): the change below would create it
      with ${plural(n, "settled decision or convention", "settled decisions and conventions")}.</p>`;
  }
  if (!n && !prop.compared) {
    return html`<${Hint} testid="drift-none" title="Nothing to compare yet">
      <p>CLAUDE.md exists, but this project has no settled decisions or conventions (stated by you or reinforced
        across sessions) to compare it with.</p></${Hint}>`;
  }
  if (!n) {
    return html`<p class="ok" data-testid="drift-none">CLAUDE.md agrees with the store: it states all
      ${plural(prop.compared, "settled decision or convention", "settled decisions and conventions")}.</p>`;
  }
  return html`<p data-testid="drift-summary">${n} of ${plural(prop.compared, "settled decision or convention",
    "settled decisions and conventions")} ${n === 1 ? "is" : "are"} missing from CLAUDE.md or contradicted by it.</p>`;
}

function Sync({ project }) {
  const [prop, setProp] = useState(null);
  const refresh = () => { setProp(null); api(`/api/sync/proposal?${q(project)}`, {}).then(setProp, (e) => setProp({ error: e.message })); };
  useEffect(refresh, [project]);
  const rows = prop && prop.candidates ? prop.candidates : [];
  return html`<div data-testid="sync">
    <h3>CLAUDE.md drift candidates${prop && prop.candidates ? html` (<span data-testid="drift-count">${rows.length}</span>)` : null}
      <button onClick=${refresh} data-testid="rescan">Rescan</button></h3>
    ${!prop ? html`<p class="muted">comparing CLAUDE.md with the store…</p>`
      : prop.error ? html`<p class="error" role="alert" data-testid="proposal-error">${prop.error}</p>`
      : html`<div>
          <${SyncStatus} prop=${prop} />
          ${rows.length ? html`<${DriftTable} rows=${rows} />` : null}
          ${rows.length ? html`<h3>Proposed CLAUDE.md change <span class="muted">(${prop.path})</span></h3>
          <div data-testid="proposal">
            ${prop.lines && prop.lines.length ? html`<ul>${prop.lines.map((l) => html`<li data-testid="proposal-line">${struck(l)}</li>`)}</ul>` : null}
            ${prop.diff ? html`<${Diff} text=${prop.diff} />` : null}
            ${(prop.not_applied || []).map((n) => html`<p class="muted">${n}</p>`)}
          </div>
          <p class="muted">Nothing is written from here: apply it with <code>agentctx sync</code> in the project (it shows this diff
            and asks before writing CLAUDE.md), or ask Claude to run <code>/agentctx:ctx-sync</code>.</p>` : null}
        </div>`}
  </div>`;
}

// ---------------------------------------------------------------------------------------------- App

function App() {
  const [route, setRoute] = useState(parseHash());
  const [projects, setProjects] = useState(null);
  const [error, setError] = useState(null);
  const main = useRef(null);
  useEffect(() => {
    const on = () => setRoute(parseHash());
    window.addEventListener("hashchange", on);
    api("/api/projects").then(setProjects, (e) => setError(e.message));
    return () => window.removeEventListener("hashchange", on);
  }, []);
  useEffect(() => { document.title = `agentctx · ${TITLES[route.view]}`; }, [route.view]);
  const project = route.project || START_PROJECT || (projects && projects[0] && projects[0].id) || "";
  const go = (view, pid) => { location.hash = `#/${view}?${q(pid)}`; };
  const View = { records: Records, graph: Graph, profile: Profile, sessions: Sessions, sync: Sync }[route.view];
  return html`<div>
    <a class="skip" href="#main" onClick=${(ev) => { ev.preventDefault(); main.current && main.current.focus(); }}>Skip to content</a>
    <header><h1>agentctx</h1>
      <nav aria-label="Views">${VIEWS.map((v) => html`<a class=${v === route.view ? "on" : ""} aria-current=${v === route.view ? "page" : null}
        href=${`#/${v}?${q(project)}`} data-testid=${`nav-${v}`}>${TITLES[v]}</a>`)}</nav>
      ${projects && projects.length ? html`<label class="project-pick">project
        <select data-testid="project" value=${project} onChange=${(ev) => go(route.view, ev.target.value)}>
        ${projects.map((p) => html`<option value=${p.id}>${p.name}</option>`)}</select></label>` : null}
    </header>
    <main id="main" ref=${main} tabindex="-1">
      <h2 class="view-title">${TITLES[route.view]}${route.view !== "projects" && projects ? html` <span class="muted">· ${
        (projects.find((p) => p.id === project) || {}).name || ""}</span>` : null}</h2>
      ${error ? html`<${Failed} error=${error} />` : null}
      ${route.view === "projects" ? (projects ? html`<${Projects} projects=${projects} choose=${(pid) => go("records", pid)} />` : null)
        : project ? html`<${View} key=${route.view + project} project=${project} />`
        : projects ? html`<${Projects} projects=${projects} choose=${(pid) => go("records", pid)} />` : null}
    </main>
  </div>`;
}

const root = document.getElementById("app");
root.textContent = ""; // drop the static "loading…" placeholder
render(html`<${App} />`, root);
