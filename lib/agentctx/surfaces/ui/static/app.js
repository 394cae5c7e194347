// agentctx dashboard: Preact + htm, no build step. Every write carries the per-start token header.
import { h, render } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import htm from "htm";

const html = htm.bind(h);
const TOKEN = document.querySelector('meta[name="agentctx-token"]').content;
const START_PROJECT = document.querySelector('meta[name="agentctx-project"]').content;
const VIEWS = ["projects", "records", "graph", "profile", "sessions", "sync"];
const TYPES = JSON.parse(document.querySelector('meta[name="agentctx-types"]').content);  // from agentctx.kinds
const COLORS = { decision: "#2f6fde", convention: "#7a4cc2", preference: "#c2410c", discovery: "#0e8a6a",
  bugfix: "#b42318", handover: "#64748b", profile: "#a16207", file: "#94a3b8" };

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

function Projects({ projects, choose }) {
  return html`<table data-testid="projects">
    <tr><th>project</th><th>root</th><th>current records</th><th>all</th><th>sessions</th><th>drift</th><th>last seen</th></tr>
    ${projects.map((p) => html`<tr key=${p.id}>
      <td><a href=${`#/records?${q(p.id)}`} onClick=${() => choose(p.id)}>${p.name}</a></td>
      <td class="muted">${p.root}</td><td>${p.current_records}</td><td>${p.all_records}</td>
      <td>${p.sessions}</td><td>${p.drift}</td><td>${day(p.last_seen)}</td></tr>`)}
  </table>`;
}

function RecordCard({ rec, project, changed }) {
  const [mode, setMode] = useState(null);
  const [error, setError] = useState(null);
  const act = (path, body) => api(`/api/records/${rec.id}/${path}?${q(project)}`, body)
    .then(() => { setMode(null); setError(null); changed(); }, (e) => setError(e.message));
  const submit = (path, names) => (ev) => {
    ev.preventDefault();
    const form = ev.target;
    act(path, Object.fromEntries(names.map((n) => [n, form.elements[n].value])));
  };
  const current = !rec.superseded_at;
  return html`<div class=${`rec ${current ? "" : "superseded"}`} data-testid="record" data-id=${rec.id}>
    <div class="title">${rec.pinned ? html`<span class="tag pin">pinned</span>` : null}${rec.title}</div>
    <div class="meta"><span class="tag">${rec.type}</span>${rec.scope} · ${rec.confidence} · ${day(rec.valid_from)}
      ${current ? "" : ` → ${day(rec.valid_to)} · superseded by ${rec.superseded_by}`} · ${rec.id}</div>
    ${rec.body ? html`<div class="body">${rec.body}</div>` : null}
    ${error ? html`<div class="error" data-testid="record-error">${error}</div>` : null}
    ${current ? html`<div class="actions">
      <button data-testid="pin" onClick=${() => act("pin", { on: !rec.pinned })}>${rec.pinned ? "Unpin" : "Pin"}</button>
      <button data-testid="edit" onClick=${() => setMode(mode === "edit" ? null : "edit")}>Edit</button>
      <button data-testid="supersede" onClick=${() => setMode(mode === "supersede" ? null : "supersede")}>Supersede</button>
    </div>` : null}
    ${mode === "edit" ? html`<form class="inline" data-testid="edit-form" onSubmit=${submit("edit", ["title", "body"])}>
      <input name="title" value=${rec.title} />
      <textarea name="body">${rec.body}</textarea>
      <div><button type="submit">Save</button> <button type="button" onClick=${() => setMode(null)}>Cancel</button></div>
    </form>` : null}
    ${mode === "supersede" ? html`<form class="inline" data-testid="supersede-form" onSubmit=${submit("supersede", ["title", "body", "rationale"])}>
      <input name="title" placeholder="new title (default: the same)" />
      <textarea name="body" placeholder="what is true now"></textarea>
      <input name="rationale" placeholder="why it changed" />
      <div><button type="submit">Supersede</button> <button type="button" onClick=${() => setMode(null)}>Cancel</button></div>
    </form>` : null}
  </div>`;
}

function Records({ project }) {
  const [filters, setFilters] = useState({ q: "", type: "", scope: "", status: "current" });
  const [text, setText] = useState("");
  const params = () => {
    const p = new URLSearchParams({ project, status: filters.status, limit: "100" });
    if (filters.q) p.set("q", filters.q);
    if (filters.type) p.set("type", filters.type);
    if (filters.scope) p.set("scope", filters.scope);
    return p.toString();
  };
  const [state, reload] = useLoad(() => api(`/api/records?${params()}`), [project, filters]);
  const set = (k) => (ev) => setFilters({ ...filters, [k]: ev.target.value });
  return html`<div>
    <form class="filters" onSubmit=${(ev) => { ev.preventDefault(); setFilters({ ...filters, q: text }); }}>
      <input type="search" data-testid="search" placeholder="search records (full text)" value=${text}
        onInput=${(ev) => setText(ev.target.value)} />
      <button type="submit" data-testid="search-go">Search</button>
      <select data-testid="filter-type" onChange=${set("type")}><option value="">all types</option>
        ${TYPES.map((t) => html`<option value=${t}>${t}</option>`)}</select>
      <select data-testid="filter-scope" onChange=${set("scope")}><option value="">project + global</option>
        <option value="project">project</option><option value="global">global</option></select>
      <select data-testid="filter-status" onChange=${set("status")}>
        ${["current", "superseded", "archived", "all"].map((s) => html`<option value=${s}>${s}</option>`)}</select>
    </form>
    ${state.error ? html`<div class="error">${state.error}</div>` : null}
    ${state.data ? html`<div data-testid="results" data-count=${state.data.length}>
      <p class="muted">${state.data.length} records</p>
      ${state.data.map((r) => html`<${RecordCard} key=${r.id + r.updated_at + r.pinned} rec=${r} project=${project} changed=${reload} />`)}
    </div>` : html`<p class="muted">loading…</p>`}
  </div>`;
}

function Graph({ project }) {
  const el = useRef(null);
  const [info, setInfo] = useState("loading…");
  useEffect(() => {
    let graph = null;
    api(`/api/graph?${q(project)}`).then((data) => {
      setInfo(`${data.nodes.length} nodes, ${data.links.length} links`);
      if (!data.nodes.length || !window.ForceGraph) return;
      graph = window.ForceGraph()(el.current)
        .width(el.current.clientWidth).height(640)
        .graphData(data)
        .nodeLabel((n) => `${n.kind === "record" ? n.type : n.kind}: ${n.label}`)
        .nodeColor((n) => (n.kind === "record" ? COLORS[n.type] || "#333" : COLORS.file) + (n.current ? "" : "66"))
        .nodeVal((n) => (n.kind === "record" ? 3 : 1.5))
        .linkColor((l) => (l.rel === "supersedes" ? "#b42318" : "#cbd5e1"))
        .linkDirectionalArrowLength((l) => (l.rel === "supersedes" ? 4 : 0))
        .cooldownTicks(150);
      window.__agentctxGraph = graph;
    }, (e) => setInfo(e.message));
    return () => { if (graph) graph._destructor && graph._destructor(); };
  }, [project]);
  return html`<div>
    <p class="legend"><span data-testid="graph-info">${info}</span>
      ${Object.entries(COLORS).map(([k, c]) => html`<span><i class="dot" style=${`background:${c}`}></i>${k}</span>`)}
      <span class="muted">red arrows: supersedes (new → old)</span></p>
    <div id="graph" ref=${el} data-testid="graph"></div>
  </div>`;
}

function Profile({ project }) {
  const [state] = useLoad(() => api(`/api/profile?${q(project)}`), [project]);
  if (state.error) return html`<div class="error">${state.error}</div>`;
  if (!state.data) return html`<p class="muted">loading…</p>`;
  return html`<div data-testid="profile">
    <h3>Developer profile (global preferences)</h3>
    ${state.data.preferences.length ? state.data.preferences.map((r) => html`<div class="rec">
      <div class="title">${r.title}</div><div class="meta">${r.confidence} · reinforced ${r.reinforce_count}× · ${day(r.recorded_at)}</div>
      ${r.body ? html`<div class="body">${r.body}</div>` : null}</div>`) : html`<p class="muted">none yet</p>`}
    <h3>This project</h3>
    <table>${state.data.project.map((r) => html`<tr><td>${r.key || r.type}</td><td>${r.title}</td></tr>`)}</table>
  </div>`;
}

function BarChart({ rows, value, label, format, testid }) {
  const W = 900, H = 180, pad = 40;
  const max = Math.max(...rows.map(value), 0) || 1;
  const bw = (W - pad * 2) / Math.max(rows.length, 1);
  return html`<svg class="chart" data-testid=${testid} viewBox=${`0 0 ${W} ${H + 30}`} width="100%">
    <text x="8" y="14">${label} (max ${format(max)})</text>
    <line x1=${pad} y1=${H} x2=${W - pad} y2=${H} stroke="#cbd5e1" />
    ${rows.map((r, i) => {
      const bh = ((H - 30) * value(r)) / max;
      return html`<rect data-testid="bar" x=${pad + i * bw + 1} y=${H - bh} width=${Math.max(bw - 2, 1)} height=${bh} fill="#2f6fde">
        <title>${day(r.started_at)} ${r.session_id}: ${format(value(r))}</title></rect>`;
    })}
    ${rows.length ? html`<text x=${pad} y=${H + 16}>${day(rows[0].started_at)}</text>
      <text x=${W - pad} y=${H + 16} text-anchor="end">${day(rows[rows.length - 1].started_at)}</text>` : null}
  </svg>`;
}

function Sessions({ project }) {
  const [state] = useLoad(() => api(`/api/sessions?${q(project)}`), [project]);
  if (state.error) return html`<div class="error">${state.error}</div>`;
  if (!state.data) return html`<p class="muted">loading…</p>`;
  const rows = state.data;
  const total = rows.reduce((s, r) => s + (r.extraction_cost_usd || 0), 0);
  return html`<div data-testid="sessions" data-count=${rows.length}>
    <p class="muted">${rows.length} sessions · extraction cost $${total.toFixed(4)}</p>
    <${BarChart} rows=${rows} value=${(r) => r.tokens_injected || 0} label="tokens injected per session" format=${(v) => `${v}`} testid="chart-tokens" />
    <${BarChart} rows=${rows} value=${(r) => r.extraction_cost_usd || 0} label="extraction cost per session (USD)" format=${(v) => `$${v.toFixed(4)}`} testid="chart-cost" />
    <table><tr><th>started</th><th>session</th><th>tokens injected</th><th>injections</th><th>extraction runs</th><th>cost</th></tr>
      ${rows.slice().reverse().map((r) => html`<tr><td>${(r.started_at || "").slice(0, 16).replace("T", " ")}</td><td class="muted">${r.session_id}</td>
        <td>${r.tokens_injected}</td><td>${r.injections}</td><td>${r.extraction_runs}</td><td>$${(r.extraction_cost_usd || 0).toFixed(4)}</td></tr>`)}
    </table>
  </div>`;
}

function Diff({ text }) {
  return html`<pre class="diff" data-testid="diff">${text.split("\n").map((line) => html`<div
    class=${line.startsWith("+") && !line.startsWith("+++") ? "add" : line.startsWith("-") && !line.startsWith("---") ? "del" : ""}>${line || " "}</div>`)}</pre>`;
}

function struck(line) {
  const m = /^~~(.*?)~~(.*)$/.exec(line);
  return m ? html`<s>${m[1]}</s>${m[2]}` : line;
}

function DriftTable({ rows }) {
  if (!rows.length) return html`<p class="muted" data-testid="drift-none">No drift candidates: CLAUDE.md agrees with the store.</p>`;
  return html`<table><tr><th>score</th><th>kind</th><th>record</th><th>detail</th></tr>
    ${rows.map((c) => html`<tr data-testid="drift-row"><td>${Number(c.score).toFixed(2)}</td><td>${c.kind}</td>
      <td>${c.type ? html`<span class="tag">${c.type}</span>` : null}${c.title || c.record_id}</td><td class="muted">${c.detail}</td></tr>`)}</table>`;
}

function Sync({ project }) {
  const [stored] = useLoad(() => api(`/api/drift?${q(project)}`), [project]);
  const [prop, setProp] = useState(null);
  const refresh = () => { setProp(null); api(`/api/sync/proposal?${q(project)}`, {}).then(setProp, (e) => setProp({ error: e.message })); };
  useEffect(refresh, [project]);
  const rows = prop && prop.candidates ? prop.candidates : stored.data || [];
  return html`<div data-testid="sync">
    <h3>CLAUDE.md drift candidates (${rows.length}) <button onClick=${refresh}>Rescan</button></h3>
    ${stored.error ? html`<div class="error">${stored.error}</div>` : html`<${DriftTable} rows=${rows} />`}
    <h3>Proposed CLAUDE.md change${prop && prop.path ? html` <span class="muted">(${prop.path})</span>` : null}</h3>
    ${!prop ? html`<p class="muted">computing…</p>`
      : prop.error ? html`<p class="error" data-testid="proposal-error">${prop.error}</p>`
      : html`<div data-testid="proposal">
          ${prop.lines && prop.lines.length ? html`<ul>${prop.lines.map((l) => html`<li data-testid="proposal-line">${
            struck(l)}</li>`)}</ul>` : null}
          ${prop.diff ? html`<${Diff} text=${prop.diff} />` : html`<p class="muted">no change proposed</p>`}
          ${(prop.not_applied || []).map((n) => html`<p class="muted">${n}</p>`)}
        </div>`}
    <p class="muted">Nothing is written from here: apply it with <code>agentctx sync</code> (it asks before writing CLAUDE.md).</p>
  </div>`;
}

function App() {
  const [route, setRoute] = useState(parseHash());
  const [projects, setProjects] = useState(null);
  const [error, setError] = useState(null);
  useEffect(() => {
    const on = () => setRoute(parseHash());
    window.addEventListener("hashchange", on);
    api("/api/projects").then(setProjects, (e) => setError(e.message));
    return () => window.removeEventListener("hashchange", on);
  }, []);
  const project = route.project || START_PROJECT || (projects && projects[0] && projects[0].id) || "";
  const go = (view, pid) => { location.hash = `#/${view}?${q(pid)}`; };
  const View = { records: Records, graph: Graph, profile: Profile, sessions: Sessions, sync: Sync }[route.view];
  return html`<div>
    <header><h1>agentctx</h1>
      <nav>${VIEWS.map((v) => html`<a class=${v === route.view ? "on" : ""} href=${`#/${v}?${q(project)}`} data-testid=${`nav-${v}`}>${v}</a>`)}</nav>
      ${projects ? html`<select data-testid="project" value=${project} onChange=${(ev) => go(route.view, ev.target.value)}>
        ${projects.map((p) => html`<option value=${p.id}>${p.name}</option>`)}</select>` : null}
    </header>
    <main>
      ${error ? html`<div class="error">${error}</div>` : null}
      ${route.view === "projects" ? (projects ? html`<${Projects} projects=${projects} choose=${(pid) => go("records", pid)} />` : null)
        : project ? html`<${View} key=${route.view + project} project=${project} />`
        : html`<p class="muted">No project yet: agentctx learns one when Claude Code runs in it.</p>`}
    </main>
  </div>`;
}

const root = document.getElementById("app");
root.textContent = ""; // drop the static "loading…" placeholder
render(html`<${App} />`, root);
