/*
 * proftrace's HTML report: reads the run embedded in the page (the head as
 * JSON, the body deflated in base64; collector/views/html-data.c writes
 * both) and draws it.  Everything from the capture reaches the page as
 * text (textContent, canvas text), never as markup.
 */
'use strict';
(function () {
  const $ = (id) => document.getElementById(id);
  const ROW = 16;                 // px per row of the timeline
  const MAX_TL_H = 560;           // px of timeline before it scrolls
  const TIP_ARGV = 4000;          // characters of a command in a tooltip
  const TABLE_ROWS = 200;
  // Events programs wrote about themselves, inside their execution's bar:
  // at most SUB_LANES levels of nesting, drawn once the bar is
  // SUB_MIN_BAR px wide and each event SUB_MIN_PX wide.
  const SUB_LANES = 4, SUB_MIN_BAR = 12, SUB_MIN_PX = 2;
  const H = JSON.parse($('pt-head').textContent);
  const hook = { ready: false, error: null };
  window.proftrace = hook;

  /* ---- formatting ---- */

  // printf's %.Nf: JavaScript's toFixed rounds a tie away from zero, C
  // to even; the critical path is listed as `proftrace report` prints it.
  function fixed(x, d) {
    const m = Math.pow(10, d), s = x * m, f = Math.floor(s);
    if (s - f === 0.5 && f % 2 === 0) return (f / m).toFixed(d);
    return x.toFixed(d);
  }
  const secs = (us) => fixed(us / 1e6, 3);
  const secsNs = (ns) => fixed(ns / 1e9, 3);
  const pct = (part, whole) => fixed(whole > 0 ? 100 * part / whole : 0, 1);
  function dur(us) {
    if (us < 0) return '?';
    if (us < 1000) return us + ' µs';
    if (us < 1e6) return fixed(us / 1000, 1) + ' ms';
    if (us < 60e6) return fixed(us / 1e6, 3) + ' s';
    const s = Math.round(us / 1e6);
    return Math.floor(s / 60) + ' min ' + (s % 60) + ' s';
  }
  function kib(k) {
    if (k < 0) return '?';
    if (k < 10240) return k + ' KiB';
    return fixed(k / 1024, 1) + ' MiB';
  }
  // An argument as a POSIX shell reads it back (as Python's shlex.quote).
  function quote(a) {
    if (a === '') return "''";
    if (/^[A-Za-z0-9_@%+=:,.\/-]+$/.test(a)) return a;
    return "'" + a.replace(/'/g, "'\"'\"'") + "'";
  }
  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }
  function hash(s) {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  }

  /* ---- the header ---- */

  function fact(dl, k, v) {
    if (v === undefined || v === null || v === '') return;
    dl.appendChild(el('dt', k));
    dl.appendChild(el('dd', v));
  }
  function note(text) { $('notes').appendChild(el('li', text)); }

  function header() {
    const dl = $('facts'), caps = H.captures, c0 = caps[0] || {};
    $('title').textContent = c0.command ? c0.command : '';
    fact(dl, 'command', caps.map((c) => c.command || '?').join('\n'));
    fact(dl, 'host', caps.map((c) => c.host || '?').join(', '));
    fact(dl, 'kernel', [...new Set(caps.map((c) => c.kernel || '?'))].join(', '));
    fact(dl, 'CPUs', caps.map((c) => (c.cpus || '?') + (c.cpu_model ? ' (' + c.cpu_model + ')' : '')).join(', '));
    fact(dl, 'start', H.startIso ? H.startIso : '-');
    fact(dl, 'wall time', secs(H.wall) + ' s');
    const cpu = H.user + H.sys;
    fact(dl, 'CPU time', secs(cpu) + ' s (user ' + secs(H.user) + ' s, system ' + secs(H.sys) +
         ' s), ' + fixed(H.wall > 0 ? cpu / H.wall : 0, 2) + ' × wall');
    fact(dl, 'executions', H.n + ': ' + H.failed + ' failed, ' + H.killed + ' killed by a signal, ' +
         H.untraced + ' untraced');
    fact(dl, 'parallelism', H.average + ' busy on average, peak ' + H.peak);
    const ci = [];
    caps.forEach((c) => { for (const k in c.ci) ci.push(k + '=' + c.ci[k]); });
    fact(dl, 'CI', [...new Set(ci)].join(' '));
    fact(dl, 'git commit', [...new Set(caps.map((c) => c.git_commit).filter(Boolean))].join(', '));
    fact(dl, caps.length > 1 ? 'captures' : 'capture',
         caps.map((c, i) => (i + 1) + ': ' + (c.file || '?') + ' (' + c.n + ' executions' +
                   (c.startIso ? ', from ' + c.startIso : '') + ')').join('\n'));
    if (!caps.length) note('No capture was read.');
    if (!H.n) note('The capture holds no executions: nothing was recorded (the command ran no traced program, or the collector stopped before any connected).');
    if (H.unfinished) note(H.unfinished + ' execution(s) have no recorded end (the collector or the process was killed): their bars end at the last record of the run, drawn hatched.');
    if (H.untraced) note(H.untraced + ' execution(s) did not load the library (static or setuid programs): their directory, memory and sometimes CPU are unknown.');
    if (H.nocpu) note(H.nocpu + ' execution(s) have no CPU time recorded.');
    if (H.damaged) note('An input was damaged or cut short: what it held up to the damage is shown.');
    if (H.lostFrames) note(H.lostFrames + ' record(s) were lost while recording.');
    if (H.badFrames) note(H.badFrames + ' record(s) were malformed and skipped.');
    document.title = 'proftrace' + (c0.command ? ': ' + c0.command.slice(0, 200) : '');
  }

  // What to make faster, in three lines of the header.
  function atAGlance() {
    const dl = $('facts');
    let best = -1;
    for (let i = 0; i < N; i++) if (best < 0 || self_[i] > self_[best]) best = i;
    if (best >= 0) fact(dl, 'most self time', S[label[best]] + ': ' + dur(self_[best]) + ' of ' + dur(dur_[best]));
    if (A.alone && A.alone.length) {
      const [i, a, b] = A.alone[0];
      fact(dl, 'longest serial stretch', S[label[i]] + ' ran alone for ' + secsNs(b - a) + ' s from ' + secsNs(a) + ' s');
    }
    const steps = (A.cp || []).filter((st) => st[0] >= 0).sort((x, y) => y[4] - x[4]).slice(0, 3);
    if (steps.length)
      fact(dl, 'critical path, most own time', steps.map((st) => S[label[st[0]]] + ' ' + secsNs(st[4]) + ' s').join(', '));
  }

  /* ---- the data ---- */

  let N = 0, S = [], AR = null, V = [], A = {}, omitted = 0, argLines = [];
  function args_() {
    if (AR === null) {
      AR = [];
      for (const l of argLines) for (const a of JSON.parse(l).A) AR.push(a);
      argLines = null;
    }
    return AR;
  }
  let start, end, dur_, parent, pid, ppid, exitc, sig, flags, ut, st, rss, self_, label, prog, pkg, cwd, exe, argv, cap;
  let firstChild, nextSib, depth, row, height, subEnd;
  // The events (html-subs.h), grouped by execution and by start:
  // subFirst[i]..subFirst[i + 1] are execution i's.
  let NS = 0, subExec, subStart, subDur, subDepth, subPh, subName, subCat, subArgs;
  let subFirst = null, subLanes = null, subInfo = null, subLine = null;
  let nrows = 0, rows = [];        // rows[r]: ids on row r, by start
  let bandTop = [];                // first row of each capture's band
  let xoff = [];                   // per capture: shift on the time axis
  const cmdCache = new Map();

  async function inflate(b64) {
    const bin = atob(b64);
    const u8 = new Uint8Array(bin.length);
    for (let i = 0; i < bin.length; i++) u8[i] = bin.charCodeAt(i);
    hook.timings.decoded = Math.round(performance.now());
    if (typeof DecompressionStream === 'undefined')
      throw new Error('this browser cannot inflate the data (it has no DecompressionStream): only the header above can be shown');
    const s = new Blob([u8]).stream().pipeThrough(new DecompressionStream('deflate'));
    return await new Response(s).text();
  }

  function parse(text) {
    const cols = {};
    for (const line of text.split('\n')) {
      if (!line) continue;
      // The arguments: parsed when a command line is first needed.
      if (line.startsWith('{"A":')) { argLines.push(line); continue; }
      const o = JSON.parse(line);
      if (o.U) { for (const s of o.U.S) S.push(s); subLine = o.U; continue; }
      if (!o.c) { A = o; continue; }
      for (const s of o.S) S.push(s);
      // An argument id -1 is the next new argument (html-data.c).
      for (const v of o.V) V.push(v);
      for (const k in o.c) (cols[k] = cols[k] || []).push(o.c[k]);
    }
    const col = (k, T) => {
      const parts = cols[k] || [], n = parts.reduce((a, p) => a + p.length, 0), out = new T(n);
      let o = 0;
      for (const p of parts) { out.set(p, o); o += p.length; }
      return out;
    };
    start = col('start', Float64Array);
    for (let i = 1; i < start.length; i++) start[i] += start[i - 1];
    N = start.length;
    dur_ = col('dur', Float64Array);
    end = new Float64Array(N);
    for (let i = 0; i < N; i++) end[i] = start[i] + dur_[i];
    const pd = col('parent', Int32Array);
    parent = new Int32Array(N);
    for (let i = 0; i < N; i++) parent[i] = pd[i] ? i - pd[i] : -1;
    pid = col('pid', Int32Array); ppid = col('ppid', Int32Array);
    for (let i = 1; i < N; i++) pid[i] += pid[i - 1];
    for (let i = 0; i < N; i++) if (parent[i] >= 0) ppid[i] += pid[parent[i]];
    exitc = col('exit', Int32Array); sig = col('sig', Int32Array);
    flags = col('flags', Int32Array);
    ut = col('utime', Float64Array); st = col('stime', Float64Array);
    rss = col('rss', Float64Array); self_ = col('self', Float64Array);
    label = col('label', Int32Array); prog = col('prog', Int32Array);
    pkg = col('pkg', Int32Array); cwd = col('cwd', Int32Array);
    exe = col('exe', Int32Array); argv = col('argv', Int32Array);
    // Command lines: -1 is the next new one, -2 one left out.
    let nv = 0, na = 0;
    for (const v of V) for (let k = 0; k < v.length; k++) if (v[k] === -1) v[k] = na++;
    for (let i = 0; i < N; i++) {
      if (argv[i] === -1) argv[i] = nv++;
      else if (argv[i] === -2) omitted++;
    }
    cap = col('capture', Int32Array);
    parseSubs(subLine);
    subLine = null;
  }

  function parseSubs(U) {
    subFirst = new Int32Array(N + 1);
    subLanes = new Uint8Array(N);
    if (!U) return;
    const c = U.c;
    subInfo = { total: U.total, kept: U.kept, counters: U.counters, argsOut: U.argsOut };
    NS = c.exec.length;
    subExec = Int32Array.from(c.exec);
    for (let u = 1; u < NS; u++) subExec[u] += subExec[u - 1];
    // Each start counts from the execution's previous event, or its start.
    subStart = new Float64Array(NS);
    for (let u = 0; u < NS; u++) {
      const e = subExec[u];
      subStart[u] = (u > 0 && subExec[u - 1] === e ? subStart[u - 1] : start[e]) + c.start[u];
    }
    subDur = Float64Array.from(c.dur); subDepth = Int32Array.from(c.depth);
    subPh = Uint8Array.from(c.ph); subName = Int32Array.from(c.name);
    subCat = Int32Array.from(c.cat); subArgs = Int32Array.from(c.args);
    for (let u = 0; u < NS; u++) {
      const e = subExec[u];
      subFirst[e + 1]++;
      subLanes[e] = Math.max(subLanes[e], 1, subPh[u] ? 0 : Math.min(SUB_LANES, subDepth[u] + 1));
    }
    for (let i = 0; i < N; i++) subFirst[i + 1] += subFirst[i];
  }

  const F_UNTRACED = 1, F_END_UNKNOWN = 2, F_KILLED = 4, F_FORK = 32;
  const str = (id) => (id >= 0 ? S[id] : '');
  const OMITTED = '(command line left out of this page to keep it small: ' +
    'only the longest executions\' are in; proftrace convert -f csv has all)';
  function args(i) { const ar = args_(); return argv[i] < 0 ? null : V[argv[i]].map((s) => ar[s]); }
  function cmdline(i) {
    const v = argv[i], ar = args_();
    if (v < 0) return S[label[i]] + ' ' + OMITTED;
    let c = cmdCache.get(v);
    if (c === undefined) { c = V[v].map((s) => quote(ar[s])).join(' '); cmdCache.set(v, c); }
    return c;
  }
  // The text a search looks at: the arguments, space-separated.
  function searchText(i) {
    const ar = args_();
    return argv[i] < 0 ? S[label[i]] : V[argv[i]].map((s) => ar[s]).join(' ');
  }
  function status(i) {
    if (sig[i] > 0) return 'killed by signal ' + sig[i];
    if (flags[i] & F_END_UNKNOWN) return 'unfinished (no recorded end)';
    if (exitc[i] >= 0) return 'exit ' + exitc[i];
    return 'exit status unknown';
  }
  const failed = (i) => sig[i] > 0 || exitc[i] > 0;

  /* ---- layout: every execution inside its parent's band ---- */

  function layout() {
    firstChild = new Int32Array(N).fill(-1);
    nextSib = new Int32Array(N).fill(-1);
    const lastChild = new Int32Array(N).fill(-1);
    const ncap = Math.max(1, H.captures.length);
    const rootsOf = Array.from({ length: ncap }, () => []);
    for (let i = 0; i < N; i++) {
      const p = parent[i];
      if (p < 0) { rootsOf[cap[i]].push(i); continue; }
      if (lastChild[p] < 0) firstChild[p] = i; else nextSib[lastChild[p]] = i;
      lastChild[p] = i;
    }
    // Children are linked in index order, which is start order.
    // A zero-length execution takes a microsecond of its row.
    subEnd = new Float64Array(N);
    for (let i = 0; i < N; i++) subEnd[i] = Math.max(end[i], start[i] + 1);
    height = new Int32Array(N);
    const yoff = new Int32Array(N);
    depth = new Int32Array(N);
    const order = [];               // parents before children
    for (const roots of rootsOf)
      for (const r of roots) {
        const stack = [r];
        while (stack.length) {
          const x = stack.pop();
          order.push(x);
          for (let c = firstChild[x]; c >= 0; c = nextSib[c]) { depth[c] = depth[x] + 1; stack.push(c); }
        }
      }
    for (let k = order.length - 1; k >= 0; k--) {
      const x = order[k], p = parent[x];
      if (p >= 0 && subEnd[x] > subEnd[p]) subEnd[p] = subEnd[x];
    }
    // Pack siblings (with their whole subtrees) so that none overlaps.
    function pack(kids) {
      let active = [], total = 0;
      for (const c of kids) {
        active = active.filter((a) => subEnd[a] > start[c]);
        active.sort((a, b) => yoff[a] - yoff[b]);
        let y = 0;
        for (const a of active) {
          if (yoff[a] >= y + height[c]) break;
          y = Math.max(y, yoff[a] + height[a]);
        }
        yoff[c] = y;
        active.push(c);
        total = Math.max(total, y + height[c]);
      }
      return total;
    }
    for (let k = order.length - 1; k >= 0; k--) {
      const x = order[k], kids = [];
      for (let c = firstChild[x]; c >= 0; c = nextSib[c]) kids.push(c);
      height[x] = 1 + pack(kids);
    }
    row = new Int32Array(N);
    let top = 0;
    bandTop = [];
    for (let c = 0; c < ncap; c++) {
      bandTop.push(top);
      if (ncap > 1) top++;           // the band's title row
      const h = pack(rootsOf[c]);
      for (const r of rootsOf[c]) row[r] = top + yoff[r];
      top += h;
    }
    for (const x of order) {
      const p = parent[x];
      if (p >= 0) row[x] = row[p] + 1 + yoff[x];
    }
    nrows = top;
    rows = Array.from({ length: nrows }, () => []);
    for (let i = 0; i < N; i++) rows[row[i]].push(i);
    rows = rows.map((r) => Int32Array.from(r));
  }

  /* ---- colours ---- */

  let colourBy = 'prog';
  const hueCache = new Map();
  function hue(s) {
    let c = hueCache.get(s);
    if (c === undefined) {
      const h = hash(s);
      c = 'hsl(' + (h % 360) + ',' + (45 + (h >>> 9) % 30) + '%,' + (62 + (h >>> 17) % 16) + '%)';
      hueCache.set(s, c);
    }
    return c;
  }
  function colour(i) {
    if (colourBy === 'exit') {
      if (sig[i] > 0) return '#a23b72';
      if (exitc[i] > 0) return '#e4572e';
      if (flags[i] & F_END_UNKNOWN || exitc[i] < 0) return '#b8b8b8';
      return '#8fc59a';
    }
    if (colourBy === 'pkg') return pkg[i] >= 0 ? hue('p' + S[pkg[i]]) : '#d0d0d0';
    return hue(S[prog[i]]);
  }

  /* ---- the view: the visible time range ---- */

  let aligned = false, v0 = 0, v1 = 1, fullLo = 0, fullHi = 1;
  let match = null, nmatch = 0, cpOn = true, cpSet = new Set(), selected = -1;
  const tl = $('tl'), wrap = $('tl-wrap'), par = $('par');

  function setAlign(a) {
    aligned = a;
    xoff = H.captures.map((c) => (aligned && c.n ? -c.start : 0));
    fullLo = Infinity; fullHi = -Infinity;
    H.captures.forEach((c, k) => {
      if (!c.n) return;
      fullLo = Math.min(fullLo, c.start + xoff[k]);
      fullHi = Math.max(fullHi, c.end + xoff[k]);
    });
    for (let i = 0; i < N; i++) if (end[i] + xoff[cap[i]] > fullHi) fullHi = end[i] + xoff[cap[i]];
    if (!isFinite(fullLo)) { fullLo = 0; fullHi = 1; }
    if (fullHi <= fullLo) fullHi = fullLo + 1;
    v0 = fullLo; v1 = fullHi;
  }
  const sx = (i) => start[i] + xoff[cap[i]];
  const ex = (i) => end[i] + xoff[cap[i]];

  function setView(a, b) {
    const min = 1;                  // µs
    if (b - a < min) { const m = (a + b) / 2; a = m - min / 2; b = m + min / 2; }
    const span = fullHi - fullLo;
    a = Math.max(a, fullLo - span * 0.05); b = Math.min(b, fullHi + span * 0.05);
    if (b <= a) { a = fullLo; b = fullHi; }
    v0 = a; v1 = b;
    draw();
  }

  function fitCanvas(c, h) {
    const r = window.devicePixelRatio || 1, w = c.clientWidth || c.parentNode.clientWidth || 800;
    if (c.width !== Math.round(w * r) || c.height !== Math.round(h * r)) {
      c.width = Math.round(w * r); c.height = Math.round(h * r);
      c.style.height = h + 'px';
    }
    const g = c.getContext('2d');
    g.setTransform(r, 0, 0, r, 0, 0);
    return [g, w];
  }

  // First index on row ids whose bar ends after t (rows never overlap,
  // so ends rise with starts).
  function firstAfter(ids, t) {
    let lo = 0, hi = ids.length;
    while (lo < hi) {
      const m = (lo + hi) >> 1;
      if (Math.max(ex(ids[m]), sx(ids[m])) < t) lo = m + 1; else hi = m;
    }
    return lo;
  }

  /* ---- the programs' own events, inside their execution's bar ---- */

  let subsDrawn = 0, selectedSub = -1, subMatch = null;
  const subHueCache = new Map();
  function subColour(u) {
    const s = S[subName[u]];
    let c = subHueCache.get(s);
    if (c === undefined) {
      const h = hash('u' + s);
      c = 'hsl(' + (h % 360) + ',' + (55 + (h >>> 9) % 25) + '%,' + (40 + (h >>> 17) % 12) + '%)';
      subHueCache.set(s, c);
    }
    return c;
  }
  const laneH = (i) => Math.floor((ROW - 4) / Math.max(1, subLanes[i]));
  // Is execution i's bar, from x0 to x1 on a canvas w wide, wide enough
  // for its events?
  function subsShown(i, x0, x1, w) {
    return subFirst[i + 1] > subFirst[i] && x1 - x0 >= 1 &&
      Math.min(x1, w + 2) - Math.max(x0, -2) >= SUB_MIN_BAR;
  }
  // Where event u is drawn, [x0, x1, y0, h] in canvas pixels (y from the
  // bar's row), or null when too small to be.
  function subBox(u, k, w) {
    const i = subExec[u], x0 = (subStart[u] + xoff[cap[i]] - v0) * k;
    if (subPh[u]) return x0 < -2 || x0 > w + 2 ? null : [x0, x0 + 1, 1, ROW - 2];
    const x1 = x0 + subDur[u] * k;
    if (x1 < -2 || x0 > w + 2 || x1 - x0 < SUB_MIN_PX || subDepth[u] >= subLanes[i]) return null;
    const lh = laneH(i);
    return [Math.max(x0, -2), Math.min(x1, w + 2), 2 + subDepth[u] * lh, lh - 1];
  }
  function drawSubs(g, i, y, k, w, dim) {
    g.strokeStyle = 'rgba(0,0,0,.45)'; g.lineWidth = 1;
    for (let u = subFirst[i]; u < subFirst[i + 1]; u++) {
      if ((subStart[u] + xoff[cap[i]] - v0) * k > w + 2) break;   // by start
      const b = subBox(u, k, w);
      if (!b) continue;
      const lit = dim && subMatch && subMatch[u];
      g.globalAlpha = dim && !lit ? 0.25 : 1;
      g.fillStyle = subPh[u] ? '#222' : lit ? '#d100d1' : subColour(u);
      g.fillRect(subPh[u] ? Math.floor(b[0]) : b[0], y + b[2], Math.max(1, b[1] - b[0] - 0.5), b[3]);
      // An edge, so that an event of its execution's colour still shows.
      if (b[1] - b[0] >= 4 && b[3] >= 3) g.strokeRect(b[0] + 0.5, y + b[2] + 0.5, b[1] - b[0] - 1.5, b[3] - 1);
      subsDrawn++;
    }
  }
  // The event of execution i under the pointer (cx, cy), or -1.
  function subAt(i, cx, cy) {
    if (i < 0 || !NS) return -1;
    const rect = tl.getBoundingClientRect(), w = rect.width, k = w / (v1 - v0);
    if (!subsShown(i, (sx(i) - v0) * k, (ex(i) - v0) * k, w)) return -1;
    const x = cx - rect.left, y = cy - rect.top + wrap.scrollTop - row[i] * ROW;
    let best = -1;
    for (let u = subFirst[i]; u < subFirst[i + 1]; u++) {
      if ((subStart[u] + xoff[cap[i]] - v0) * k > x + 2) break;
      const b = subBox(u, k, w);
      if (!b) continue;
      if (subPh[u]) { if (Math.abs(x - b[0]) <= 2) return u; continue; }
      if (x >= b[0] && x <= b[1] && y >= b[2] && y < b[2] + b[3] + 1) best = u;
    }
    return best;
  }
  function subArgLines(u) {
    const id = subArgs[u];
    if (id === -2) return ['  (left out of this page to keep it small)'];
    if (id < 0) return [];
    try {
      const o = JSON.parse(S[id]);
      if (o && typeof o === 'object' && !Array.isArray(o))
        return Object.keys(o).map((key) => '  ' + key + ': ' + (typeof o[key] === 'string' ? o[key] : JSON.stringify(o[key])));
    } catch (e) { /* cut to its bound: shown as it is */ }
    return ['  ' + S[id]];
  }
  function subLines(u) {
    const i = subExec[u], cat = S[subCat[u]];
    const lines = [(subPh[u] ? 'instant' : 'duration ' + dur(subDur[u])) + (cat ? ', category ' + cat : ''),
      'at ' + secs(subStart[u]) + ' s, ' + dur(subStart[u] - start[i]) + ' into ' + S[label[i]] + ' (pid ' + pid[i] + ')'];
    const a = subArgLines(u);
    if (a.length) lines.push('args', ...a);
    return lines;
  }
  function showSubTip(u, cx, cy) {
    placeTip(S[subName[u]], subLines(u), cx, cy);
  }
  function selectSub(u) {
    selected = subExec[u];
    selectedSub = u;
    const d = $('details');
    d.textContent = '';
    d.appendChild(el('h3', S[subName[u]]));
    d.appendChild(el('div', subLines(u).join('\n'), 'mono'));
    const p = el('p', 'An event ' + S[label[selected]] + ' wrote about itself; the execution: ');
    p.appendChild(link(S[label[selected]], selected));
    d.appendChild(p);
    draw();
  }

  let frameMs = 0;
  function drawTimeline() {
    const t0 = performance.now();
    subsDrawn = 0;
    const viewH = Math.min(MAX_TL_H, Math.max(nrows, 3) * ROW + 20);
    wrap.style.height = viewH + 'px';
    $('tl-space').style.height = Math.max(0, nrows * ROW + 20 - viewH) + 'px';
    const [g, w] = fitCanvas(tl, viewH);
    const k = w / (v1 - v0), top = wrap.scrollTop;
    g.clearRect(0, 0, w, viewH);
    g.font = '11px system-ui, sans-serif';
    g.textBaseline = 'middle';
    const r0 = Math.max(0, Math.floor(top / ROW)), r1 = Math.min(nrows, Math.ceil((top + viewH) / ROW));
    const dim = match !== null;
    for (let r = r0; r < r1; r++) {
      const ids = rows[r], y = r * ROW - top;
      let j = firstAfter(ids, v0);
      while (j < ids.length) {
        const i = ids[j], s = sx(i);
        if (s > v1) break;
        const x0 = (s - v0) * k, x1 = (ex(i) - v0) * k;
        if (x1 - x0 < 1) {
          // Too small to see: one pixel for all that start here.
          const px = Math.floor(x0);
          g.globalAlpha = dim && !match[i] ? 0.25 : 1;
          g.fillStyle = dim && match[i] ? '#d100d1' : colour(i);
          g.fillRect(px, y + 1, 1, ROW - 2);
          j = firstAfter(ids, v0 + (px + 1) / k);
          if (j < ids.length && ids[j] === i) j++;
          continue;
        }
        const bx = Math.max(x0, -2), bw = Math.min(x1, w + 2) - bx;
        g.globalAlpha = dim && !match[i] ? 0.25 : 1;
        g.fillStyle = colour(i);
        g.fillRect(bx, y + 1, bw, ROW - 2);
        if (flags[i] & F_END_UNKNOWN) {
          g.fillStyle = 'rgba(255,255,255,.55)';
          for (let hx = Math.ceil(bx / 8) * 8; hx < bx + bw; hx += 8) g.fillRect(hx, y + 1, 3, ROW - 2);
        }
        if (NS && subsShown(i, x0, x1, w)) { drawSubs(g, i, y, k, w, dim); g.globalAlpha = dim && !match[i] ? 0.25 : 1; }
        if (dim && match[i]) { g.strokeStyle = '#d100d1'; g.lineWidth = 2; g.strokeRect(bx + 1, y + 2, bw - 2, ROW - 4); }
        if (bw > 24) {
          g.fillStyle = '#111';
          const tx = Math.max(bx, 0) + 3, room = Math.min(bx + bw, w) - tx - 2;
          if (room > 12) {
            let t = S[label[i]];
            const fit = Math.floor(room / 6);
            if (t.length > fit) t = t.slice(0, Math.max(0, fit - 1)) + '…';
            g.fillText(t, tx, y + ROW / 2 + 0.5);
          }
        }
        j++;
      }
    }
    g.globalAlpha = 1;
    if (cpOn) {
      g.strokeStyle = '#000'; g.lineWidth = 2;
      for (const i of cpSet) {
        const y = row[i] * ROW - top;
        if (y < -ROW || y > viewH) continue;
        const x0 = (sx(i) - v0) * k, x1 = (ex(i) - v0) * k;
        if (x1 < 0 || x0 > w) continue;
        // A frame round a bar wide enough for one, a mark under it else.
        if (x1 - x0 >= 6) g.strokeRect(Math.max(x0, -2) + 1, y + 1, Math.min(x1, w + 2) - Math.max(x0, -2) - 2, ROW - 2);
        else { g.fillStyle = '#000'; g.fillRect(x0, y + ROW - 3, Math.max(1, x1 - x0), 3); }
      }
    }
    if (selected >= 0) {
      const y = row[selected] * ROW - top, x0 = (sx(selected) - v0) * k, x1 = (ex(selected) - v0) * k;
      g.strokeStyle = '#0645ad'; g.lineWidth = 3;
      g.strokeRect(Math.max(x0, -3), y, Math.max(2, Math.min(x1, w + 3) - Math.max(x0, -3)), ROW);
      const b = selectedSub >= 0 && subsShown(selected, x0, x1, w) ? subBox(selectedSub, k, w) : null;
      if (b) { g.lineWidth = 2; g.strokeRect(b[0], y + b[2], Math.max(2, b[1] - b[0]), b[3]); }
    }
    if (H.captures.length > 1) {
      g.fillStyle = '#333'; g.font = 'bold 11px system-ui, sans-serif';
      H.captures.forEach((c, n) => {
        const y = bandTop[n] * ROW - top;
        g.fillStyle = '#eee'; g.fillRect(0, y, w, ROW);
        g.fillStyle = '#333';
        g.fillText('capture ' + (n + 1) + ': ' + (c.host || '?') + ' ' + (c.file || ''), 4, y + ROW / 2);
      });
    }
    if (drag && drag.moved && !drag.pan) {
      g.fillStyle = 'rgba(6,69,173,.15)';
      const a = Math.min(drag.x0, drag.x), b = Math.max(drag.x0, drag.x);
      g.fillRect(a, 0, b - a, viewH);
    }
    frameMs = performance.now() - t0;
  }

  function drawPar() {
    const h = 120, [g, w] = fitCanvas(par, h), P = A.profile;
    g.clearRect(0, 0, w, h);
    if (!P || !N) return;
    if (aligned && H.captures.length > 1) {
      g.fillStyle = '#555'; g.font = '12px system-ui, sans-serif';
      g.fillText('Parallelism is of the whole run, on the wall-clock axis: uncheck "align" to see it.', 8, 20);
      return;
    }
    const cpus = Math.max(1, ...H.captures.map((c) => +c.cpus || 0));
    // Scaled to the busy ones and the CPUs: running executions include
    // every waiting parent, and may go off the top.
    const ymax = Math.max(cpus, ...P.busyMax, ...P.run.map((v) => v / 100)) * 1.1 || 1;
    const k = w / (v1 - v0), y = (v) => h - 14 - (h - 18) * v / ymax;
    const bw = fullHiRun / P.buckets;   // µs per bucket, on the run's own axis
    const off = 0;
    // Serial stretches.
    g.fillStyle = 'rgba(230,160,0,.25)';
    for (const [, a, b] of A.alone) {
      const x0 = (a / 1000 + off - v0) * k, x1 = (b / 1000 + off - v0) * k;
      g.fillRect(x0, 0, Math.max(1, x1 - x0), h - 14);
    }
    const series = (vals, scale, fill) => {
      g.fillStyle = fill;
      g.beginPath();
      g.moveTo((0 - v0) * k, y(0));
      for (let b = 0; b < P.buckets; b++) {
        const x0 = (b * bw - v0) * k, x1 = ((b + 1) * bw - v0) * k;
        if (x1 < -1 || x0 > w + 1) continue;
        const v = Math.max(0, y(vals[b] / scale));
        g.lineTo(x0, v); g.lineTo(x1, v);
      }
      g.lineTo((P.buckets * bw - v0) * k, y(0));
      g.closePath(); g.fill();
    };
    series(P.run, 100, '#b9d3ee');
    series(P.busy, 100, '#3b6ea5');
    g.strokeStyle = '#c0392b'; g.setLineDash([5, 3]); g.lineWidth = 1;
    g.beginPath(); g.moveTo(0, y(cpus)); g.lineTo(w, y(cpus)); g.stroke(); g.setLineDash([]);
    g.fillStyle = '#c0392b'; g.font = '11px system-ui, sans-serif';
    g.fillText(cpus + ' CPUs', 4, y(cpus) - 6);
    // The time axis.
    g.fillStyle = '#444'; g.strokeStyle = '#999';
    const span = v1 - v0, step = niceStep(span / 8);
    for (let t = Math.ceil(v0 / step) * step; t <= v1; t += step) {
      const x = (t - v0) * k;
      g.beginPath(); g.moveTo(x, h - 14); g.lineTo(x, h - 10); g.stroke();
      g.fillText(axisLabel(t, step), x + 2, h - 2);
    }
  }
  let fullHiRun = 1;
  function niceStep(x) {
    const p = Math.pow(10, Math.floor(Math.log10(Math.max(x, 1e-9))));
    for (const m of [1, 2, 5, 10]) if (p * m >= x) return p * m;
    return p * 10;
  }
  function axisLabel(t, step) {
    const d = step >= 1e6 ? 0 : step >= 1e3 ? 3 : 6;
    return (t / 1e6).toFixed(Math.min(6, d)) + ' s';
  }

  function draw() {
    drawTimeline();
    drawPar();
    $('range').textContent = secs(v0) + ' s – ' + secs(v1) + ' s (' + secs(v1 - v0) + ' s shown)';
  }

  /* ---- pointing ---- */

  function hit(cx, cy) {
    const rect = tl.getBoundingClientRect();
    const x = cx - rect.left, y = cy - rect.top + wrap.scrollTop;
    const r = Math.floor(y / ROW);
    if (r < 0 || r >= nrows) return -1;
    const k = rect.width / (v1 - v0), t = v0 + x / k, ids = rows[r];
    let j = firstAfter(ids, t - 2 / k);
    for (; j < ids.length; j++) {
      const i = ids[j], x0 = (sx(i) - v0) * k, x1 = Math.max((ex(i) - v0) * k, x0 + 1);
      if (x0 > x + 2) break;
      if (x >= x0 - 2 && x <= x1 + 2) return i;
    }
    return -1;
  }

  const tip = $('tip');
  function tipText(i) {
    const c = cmdline(i);
    const lines = [
      c.length > TIP_ARGV ? c.slice(0, TIP_ARGV) + '… (' + (c.length - TIP_ARGV) + ' more characters: click for all)' : c,
      'cwd ' + (cwd[i] >= 0 ? S[cwd[i]] : '(unknown)'),
      'pid ' + pid[i] + ', ppid ' + ppid[i] + (flags[i] & F_FORK ? ', a fork child' : '') +
        (flags[i] & F_UNTRACED ? ', untraced' : ''),
      status(i),
      'start ' + secs(start[i]) + ' s, duration ' + dur(dur_[i]) + ', self ' + dur(self_[i]),
      'CPU user ' + (ut[i] >= 0 ? dur(ut[i]) : '?') + ', sys ' + (st[i] >= 0 ? dur(st[i]) : '?') + ', peak RSS ' + kib(rss[i]),
    ];
    if (pkg[i] >= 0) lines.push('package ' + S[pkg[i]]);
    return lines;
  }
  // The tooltip: a bold title over lines of text, beside the pointer and
  // inside the window.
  function placeTip(title, lines, cx, cy) {
    tip.textContent = '';
    tip.appendChild(el('b', title));
    tip.appendChild(document.createTextNode('\n' + lines.join('\n')));
    tip.hidden = false;
    const w = tip.offsetWidth, h = tip.offsetHeight;
    tip.style.left = Math.max(0, Math.min(cx + 14, window.innerWidth - w - 4)) + 'px';
    tip.style.top = (cy + 16 + h > window.innerHeight ? Math.max(0, cy - h - 8) : cy + 16) + 'px';
  }
  function showTip(i, cx, cy) {
    if (i < 0) { tip.hidden = true; return; }
    placeTip(S[label[i]], tipText(i), cx, cy);
  }

  function link(text, i) {
    const a = el('a', text);
    a.addEventListener('click', () => { select(i); reveal(i); });
    return a;
  }
  function select(i) {
    selected = i;
    selectedSub = -1;
    const d = $('details');
    d.textContent = '';
    if (i < 0) { d.appendChild(el('p', 'Click an execution to pin its details here.', 'hint')); draw(); return; }
    d.appendChild(el('h3', S[label[i]]));
    d.appendChild(el('div', tipText(i).slice(1).join('\n'), 'mono'));
    const anc = [];
    for (let p = parent[i]; p >= 0; p = parent[p]) anc.push(p);
    const av = args(i);
    if (av) {
      d.appendChild(el('h3', 'Command line (' + av.length + ' arguments)'));
      const ol = el('ol');
      ol.start = 0;
      av.forEach((a) => ol.appendChild(el('li', a)));
      d.appendChild(ol);
    } else {
      d.appendChild(el('p', OMITTED, 'warn'));
    }
    d.appendChild(el('h3', 'Ancestors (' + anc.length + ')'));
    const ul = el('ul', null, 'ancestors');
    anc.forEach((p) => {
      const li = el('li');
      li.appendChild(link(S[label[p]], p));
      li.appendChild(document.createTextNode('  pid ' + pid[p] + ', ' + dur(dur_[p])));
      ul.appendChild(li);
    });
    d.appendChild(ul);
    let nk = 0;
    for (let c = firstChild[i]; c >= 0; c = nextSib[c]) nk++;
    d.appendChild(el('p', nk + ' direct children' + (cpSet.has(i) ? '; on the critical path' : '')));
    draw();
  }
  // Scroll the timeline so that i shows, zooming out if it is off range.
  function reveal(i) {
    const s = sx(i), e = Math.max(ex(i), s + 1);
    if (s < v0 || e > v1) {
      const pad = (e - s) * 0.5;
      setView(Math.min(v0, s - pad), Math.max(v1, e + pad));
    }
    const y = row[i] * ROW;
    if (y < wrap.scrollTop || y + ROW > wrap.scrollTop + wrap.clientHeight)
      wrap.scrollTop = Math.max(0, y - wrap.clientHeight / 2);
    draw();
  }

  let drag = null;
  function pointer() {
    tl.addEventListener('mousemove', (ev) => {
      if (drag) {
        if (Math.abs(ev.clientX - drag.cx) > 3 || Math.abs(ev.clientY - drag.cy) > 3) drag.moved = true;
        const rect = tl.getBoundingClientRect();
        drag.x = ev.clientX - rect.left;
        if (drag.moved && drag.pan) {
          const k = (drag.b - drag.a) / rect.width, dx = (ev.clientX - drag.cx) * k;
          v0 = drag.a - dx; v1 = drag.b - dx;
          wrap.scrollTop = drag.top - (ev.clientY - drag.cy);
        }
        tip.hidden = true;
        draw();
        return;
      }
      const i = hit(ev.clientX, ev.clientY), u = subAt(i, ev.clientX, ev.clientY);
      if (u >= 0) showSubTip(u, ev.clientX, ev.clientY); else showTip(i, ev.clientX, ev.clientY);
    });
    tl.addEventListener('mouseleave', () => { tip.hidden = true; });
    tl.addEventListener('mousedown', (ev) => {
      if (ev.button !== 0) return;
      const rect = tl.getBoundingClientRect();
      drag = { cx: ev.clientX, cy: ev.clientY, x0: ev.clientX - rect.left, x: ev.clientX - rect.left,
               a: v0, b: v1, top: wrap.scrollTop, pan: ev.shiftKey, moved: false };
      ev.preventDefault();
    });
    window.addEventListener('mouseup', (ev) => {
      if (!drag) return;
      const d = drag;
      drag = null;
      if (!d.moved) {
        if (ev.target === tl) {
          const i = hit(ev.clientX, ev.clientY), u = subAt(i, ev.clientX, ev.clientY);
          if (u >= 0) selectSub(u); else select(i);
        }
        return;
      }
      if (!d.pan) {
        const rect = tl.getBoundingClientRect(), k = (v1 - v0) / rect.width;
        const a = Math.min(d.x0, d.x), b = Math.max(d.x0, d.x);
        if (b - a > 3) setView(v0 + a * k, v0 + b * k);
      }
      draw();
    });
    tl.addEventListener('dblclick', () => setView(fullLo, fullHi));
    tl.addEventListener('wheel', (ev) => {
      if (ev.altKey) return;               // scroll the rows
      ev.preventDefault();
      const rect = tl.getBoundingClientRect(), k = (v1 - v0) / rect.width;
      if (ev.shiftKey || Math.abs(ev.deltaX) > Math.abs(ev.deltaY)) {
        const dx = (ev.shiftKey ? ev.deltaY : ev.deltaX) * k;
        setView(v0 + dx, v1 + dx);
        return;
      }
      const t = v0 + (ev.clientX - rect.left) * k, f = Math.pow(1.0015, ev.deltaY);
      setView(t - (t - v0) * f, t + (v1 - t) * f);
    }, { passive: false });
    wrap.addEventListener('scroll', () => drawTimeline());
    window.addEventListener('keydown', (ev) => {
      if (ev.target.tagName === 'INPUT' || ev.target.tagName === 'SELECT') return;
      const s = v1 - v0;
      if (ev.key === 'ArrowLeft') setView(v0 - s / 10, v1 - s / 10);
      else if (ev.key === 'ArrowRight') setView(v0 + s / 10, v1 + s / 10);
      else if (ev.key === '+' || ev.key === '=') setView(v0 + s / 4, v1 - s / 4);
      else if (ev.key === '-') setView(v0 - s / 2, v1 + s / 2);
      else if (ev.key === 'Escape') { select(-1); setView(fullLo, fullHi); }
    });
    window.addEventListener('resize', () => { draw(); drawFlame(); });
  }

  /* ---- search ---- */

  function search(q) {
    $('search').value = q;
    if (!q) { match = null; subMatch = null; nmatch = 0; $('matches').textContent = ''; draw(); return { count: 0, ids: [] }; }
    let test;
    const m = /^\/(.*)\/([a-z]*)$/s.exec(q);
    if (m) {
      let re;
      try { re = new RegExp(m[1], m[2]); } catch (e) {
        $('matches').textContent = 'not a regular expression: ' + e.message;
        match = null; subMatch = null; draw(); return { count: 0, ids: [], error: e.message };
      }
      test = (s) => { re.lastIndex = 0; return re.test(s); };
    } else {
      const lq = q.toLowerCase();
      test = (s) => s.toLowerCase().includes(lq);
    }
    match = new Uint8Array(N);
    const byVec = new Map(), ids = [];
    let sum = 0, covered = 0, cover = -Infinity;
    for (let i = 0; i < N; i++) {
      let t = argv[i] < 0 ? undefined : byVec.get(argv[i]);
      if (t === undefined) { t = test(searchText(i)); if (argv[i] >= 0) byVec.set(argv[i], t); }
      if (t) { match[i] = 1; ids.push(i); sum += dur_[i]; }
    }
    const iv = ids.map((i) => [start[i], end[i]]).sort((a, b) => a[0] - b[0]);
    for (const [a, b] of iv) {
      if (b <= cover) continue;
      covered += b - Math.max(a, cover);
      cover = b;
    }
    nmatch = ids.length;
    // The events programs wrote about themselves match by their name.
    let nsub = 0;
    subMatch = NS ? new Uint8Array(NS) : null;
    const byName = new Map();
    for (let u = 0; u < NS; u++) {
      let t = byName.get(subName[u]);
      if (t === undefined) { t = test(S[subName[u]]); byName.set(subName[u], t); }
      if (t) { subMatch[u] = 1; nsub++; }
    }
    $('matches').textContent = nmatch + (nmatch === 1 ? ' match, ' : ' matches, ') + secs(sum) +
      ' s in all, ' + secs(covered) + ' s of wall time (' + pct(covered, H.wall) + ' %)' +
      (NS ? '; ' + nsub + (nsub === 1 ? ' event' : ' events') + ' inside the programs by name' : '');
    draw();
    return { count: nmatch, ids, total: sum, covered, subs: nsub };
  }

  /* ---- critical path, parallelism tables ---- */

  function table(t, head, rowsData, opts) {
    opts = opts || {};
    t.textContent = '';
    const tr = el('tr');
    head.forEach((h) => tr.appendChild(el('th', h)));
    t.appendChild(tr);
    for (const r of rowsData) {
      const row_ = el('tr');
      r.forEach((v, k) => {
        const td = el('td', null, opts.text && opts.text[k] ? (opts.text[k] === 'l' ? 'l' : '') : 'n');
        if (v instanceof Node) td.appendChild(v); else td.textContent = v;
        row_.appendChild(td);
      });
      t.appendChild(row_);
    }
  }

  function cpRows() {
    const wall = A.wallNs, out = [];
    for (const k of A.cpShown) {
      const [i, d, f, to, own] = A.cp[k];
      let ind = '';
      for (let dep = 1; dep < d && dep <= 12; dep++) ind += '  ';
      if (d > 13) ind += '[' + (d - 1) + '] ';
      out.push({ exec: i, cells: [secsNs(f), secsNs(to - f), pct(to - f, wall) + '%',
                                  secsNs(own), pct(own, wall) + '%', ind + S[label[i]]] });
    }
    return out;
  }

  function critical() {
    cpSet = new Set(A.cp.filter((s) => s[0] >= 0).map((s) => s[0]));
    const wall = A.wallNs, rs = cpRows().map((r) => {
      const span = el('span', /^ */.exec(r.cells[5])[0]);
      span.appendChild(link(r.cells[5].replace(/^ */, ''), r.exec));
      return [...r.cells.slice(0, 5), span];
    });
    if (A.cpShown.length < A.cpSteps)
      rs.push(['', '', '', secsNs(A.cpHiddenOwn), pct(A.cpHiddenOwn, wall) + '%',
               '... ' + (A.cpSteps - A.cpShown.length) + ' shorter steps']);
    if (A.cpIdle > 0)
      rs.push(['', '', '', secsNs(A.cpIdle), pct(A.cpIdle, wall) + '%', 'off the path: nothing ran, or nothing the path waited for']);
    table($('cp'), ['at s', 'span s', '%wall', 'own s', '%wall', 'execution'], rs,
          { text: [0, 0, 0, 0, 0, 'l'] });
    table($('cp-prog'), ['own s', '%wall', 'steps', 'program'],
          A.cpByProgram.slice(0, 10).map(([n, own, c]) => [secsNs(own), pct(own, wall) + '%', c, n]),
          { text: [0, 0, 0, 'l'] });
    if (!A.cp.length) $('cp').textContent = 'No critical path: the run has no executions.';
  }

  function levels() {
    const wall = A.wallNs;
    table($('levels'), ['busy', 'time s', '%wall'],
          A.levels.map(([lo, hi, ns]) => [lo === hi ? String(lo) : lo + '-' + hi, secsNs(ns), pct(ns, wall) + '%']));
    const r = el('tr'); r.appendChild(el('td', 'average ' + A.average + ' busy, peak ' + A.peak)); r.firstChild.colSpan = 3;
    $('levels').appendChild(r);
    table($('alone'), ['length s', 'at s', '%wall', 'running alone'],
          A.alone.map(([i, a, b]) => [secsNs(b - a), secsNs(a), pct(b - a, wall) + '%', link(S[label[i]], i)]),
          { text: [0, 0, 0, 'l'] });
  }

  /* ---- what it could have been (proftrace deps) ---- */

  let depsBars = [];
  function deps() {
    const D = H.deps;
    if (!D) return;
    $('sec-deps').hidden = false;
    const rows = [['now', secs(D.now)]].concat(D.ideal.map(([c, us]) =>
      ['ideal on ' + (c === null ? 'unlimited CPUs' : c + (c === 1 ? ' CPU' : ' CPUs')), secs(us)]));
    table($('deps-ideal'), ['', 'wall s'], rows, { text: ['l', 0] });
    const raced = new Set();
    D.races.forEach(([, w, r]) => { raced.add(w); raced.add(r); });
    const LANE = 18, TOP = 4, c = $('deps');
    const [g, w] = fitCanvas(c, TOP + (D.cpus + 1) * LANE + 14);
    const span = Math.max(D.now, D.span, 1), k = (w - 2) / span;
    g.clearRect(0, 0, w, c.height);
    g.font = '11px sans-serif';
    g.textBaseline = 'middle';
    depsBars = [];
    // The lanes: this machine's CPUs, then the wall time now, to compare.
    for (let cpu = 0; cpu <= D.cpus; cpu++) {
      g.fillStyle = cpu % 2 ? '#f4f4f4' : '#fafafa';
      g.fillRect(0, TOP + cpu * LANE, w, LANE);
    }
    g.fillStyle = '#bbb';
    g.fillRect(1, TOP + D.cpus * LANE + 4, D.now * k, LANE - 8);
    g.fillStyle = '#333';
    g.fillText('now: ' + secs(D.now) + ' s', 4, TOP + D.cpus * LANE + LANE / 2);
    const jobLabel = (i) => (D.labels && D.labels[i] !== undefined ? D.labels[i] : S[label[i]]);
    for (const [i, cpu, a, b, crit] of D.jobs) {
      const x = 1 + a * k, bw = Math.max(1, (b - a) * k), y = TOP + cpu * LANE + 2;
      g.fillStyle = raced.has(i) ? '#e06666' : '#7faed6';
      g.fillRect(x, y, bw, LANE - 4);
      if (crit) { g.strokeStyle = '#000'; g.lineWidth = 2; g.strokeRect(x + 1, y + 1, Math.max(0, bw - 2), LANE - 6); }
      if (bw > 40) {
        g.fillStyle = '#000';
        g.save(); g.beginPath(); g.rect(x, y, bw, LANE - 4); g.clip();
        g.fillText(jobLabel(i), x + 3, y + (LANE - 4) / 2);
        g.restore();
      }
      depsBars.push({ i: i, cpu: cpu, start: a, end: b, critical: !!crit, race: raced.has(i), x: x, y: y, w: bw, h: LANE - 4 });
    }
    g.fillStyle = '#333';
    g.fillText('ideal on ' + D.cpus + ' CPUs: ' + secs(D.span) + ' s', 4, TOP + (D.cpus + 1) * LANE + 6);
    c.onclick = (ev) => {
      const r = c.getBoundingClientRect(), x = ev.clientX - r.left, y = ev.clientY - r.top;
      const hit = depsBars.find((b) => x >= b.x && x <= b.x + b.w && y >= b.y && y <= b.y + b.h);
      if (hit) { select(hit.i); reveal(hit.i); }
    };
    if (!D.races.length) $('deps-races').appendChild(el('tr')).appendChild(el('td', 'None.'));
    else table($('deps-races'), ['path', 'writer', 'reader', 'fix'],
               D.races.map(([p, wr, rd, fix]) => [p, link(jobLabel(wr), wr), link(jobLabel(rd), rd), fix || '']),
               { text: ['l', 'l', 'l', 'l'] });
    const sers = D.sers || [];
    if (!sers.length) $('deps-sers').appendChild(el('tr')).appendChild(el('td', 'None.'));
    else table($('deps-sers'), ['gain s', 'waits', 'for', 'where'],
               sers.map(([us, a, b, why]) => [secs(us), link(jobLabel(b), b), link(jobLabel(a), a), why]),
               { text: [0, 'l', 'l', 'l'] });
    const hints = D.hints || [];
    if (!hints.length) $('deps-hints').appendChild(el('tr')).appendChild(el('td', 'Nothing found to try.'));
    else table($('deps-hints'), ['saves s', 'predicted s', 'change', 'what'],
               hints.map(([chg, what, pus, sus, noise]) => [secs(sus) + (noise ? ' (within noise)' : ''), secs(pus),
                                                          'proftrace whatif CAPTURE ' + chg, what]),
               { text: [0, 0, 'l', 'l'] });
  }

  /* ---- tables ---- */

  let tableKind = 'slowest', sortCol = -1, sortDesc = true;
  function groups(keyOf) {
    const m = new Map();
    for (let i = 0; i < N; i++) {
      const k = keyOf(i);
      let g = m.get(k);
      if (!g) { g = { key: k, n: 0, self: 0, total: 0, cpu: 0 }; m.set(k, g); }
      g.n++; g.self += self_[i]; g.cpu += Math.max(0, ut[i]) + Math.max(0, st[i]);
      // Total: wall time of the executions with no ancestor of the group.
      let p = parent[i];
      while (p >= 0 && keyOf(p) !== k) p = parent[p];
      if (p < 0) g.total += dur_[i];
    }
    return [...m.values()];
  }
  function tableData() {
    const execRow = (i) => [link(S[label[i]], i), dur(dur_[i]), dur(self_[i]), status(i), pid[i], cmdline(i).slice(0, 300)];
    const execHead = ['execution', 'duration', 'self', 'status', 'pid', 'command'];
    const execKeys = [(i) => S[label[i]], (i) => dur_[i], (i) => self_[i], status, (i) => pid[i], cmdline];
    const grp = (name, keyOf) => ({
      head: [name, 'executions', 'self s', '%wall', 'total s', 'CPU s'],
      items: groups(keyOf), text: ['l'],
      keys: [(g) => g.key, (g) => g.n, (g) => g.self, (g) => g.self, (g) => g.total, (g) => g.cpu],
      row: (g) => [g.key, g.n, secs(g.self), pct(g.self * 1000, A.wallNs) + '%', secs(g.total), secs(g.cpu)],
      sort: 2,
    });
    if (tableKind === 'inside' || tableKind === 'inside-subj') return insideData(tableKind === 'inside-subj');
    if (tableKind === 'prog') return grp('program', (i) => S[prog[i]]);
    if (tableKind === 'pkg') return grp('package', (i) => (pkg[i] >= 0 ? S[pkg[i]] : '(none)'));
    if (tableKind === 'cwd') return grp('directory', (i) => (cwd[i] >= 0 ? S[cwd[i]] : '(unknown)'));
    const ids = [];
    for (let i = 0; i < N; i++) if (tableKind !== 'failed' || failed(i)) ids.push(i);
    return { head: execHead, items: ids, keys: execKeys, row: execRow, text: ['l', 0, 0, 't', 0, 'l'],
             sort: tableKind === 'failed' ? -1 : 1 };
  }
  // `proftrace report`'s "Inside the programs" (analysis/inside.c), its
  // rows in its order: the kinds of event, or what the costliest were about.
  function insideData(subj) {
    const I = A.inside || { events: 0, execs: 0, kinds: 0, byName: [], bySubject: [] };
    const items = subj ? I.bySubject.map(([n, d, t, c, l]) => ({ n, d, t, c, l }))
      : I.byName.map(([n, t, c, l]) => ({ n, d: '', t, c, l }));
    const head = ['total s', 'count', 'event', ...(subj ? ['subject'] : []), 'longest in'];
    const keys = [(x) => x.t, (x) => x.c, (x) => x.n, ...(subj ? [(x) => x.d] : []), (x) => S[label[x.l]]];
    return {
      head, items, keys, sort: -1,
      row: (x) => [secsNs(x.t), x.c, x.n, ...(subj ? [x.d] : []), link(S[label[x.l]], x.l)],
      text: [0, 0, 'l', 'l', 'l'],
      more: !subj && I.kinds > I.byName.length ? '... ' + (I.kinds - I.byName.length) + ' more' : null,
      note: I.events + ' events from ' + I.execs + ' executions' + (I.note ? '; ' + I.note : ''),
      empty: 'No program wrote events about itself (clang -ftime-trace, dune --trace-file, $PROFTRACE_TRACE_DIR).',
    };
  }
  function drawTable() {
    const t = $('table'), d = tableData();
    $('table-note').textContent = d.note || '';
    let items = d.items;
    const col = sortCol >= 0 ? sortCol : d.sort;
    if (col >= 0) {
      const keyed = items.map((x) => [d.keys[col](x), x]);
      keyed.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0) * (sortDesc ? -1 : 1));
      items = keyed.map((x) => x[1]);
    }
    table(t, d.head, items.slice(0, TABLE_ROWS).map(d.row), { text: d.text });
    if (items.length > TABLE_ROWS || d.more) {
      const r = el('tr'), c = el('td', d.more || '... ' + (items.length - TABLE_ROWS) + ' more rows');
      c.colSpan = d.head.length; r.appendChild(c); t.appendChild(r);
    }
    if (!items.length) t.appendChild(el('tr')).appendChild(el('td', tableKind === 'failed' ? 'No execution failed.' : d.empty || 'Nothing to show.'));
    t.querySelectorAll('th').forEach((th, k) => th.addEventListener('click', () => {
      if (sortCol === k) sortDesc = !sortDesc; else { sortCol = k; sortDesc = k !== 0; }
      drawTable();
    }));
  }

  /* ---- flame graph: the tree merged by label ---- */

  let flame = null, flameZoom = 0;
  function buildFlame() {
    const wgt = $('flame-weight').value === 'cpu'
      ? (i) => Math.max(0, ut[i]) + Math.max(0, st[i]) : (i) => self_[i];
    const nodes = [{ label: 'all', parent: -1, own: 0, kids: new Map(), depth: 0 }];
    const nodeOf = new Int32Array(N);
    const order = [];
    for (let i = 0; i < N; i++) if (parent[i] < 0) order.push(i);
    for (let k = 0; k < order.length; k++) {
      const i = order[k], p = parent[i] < 0 ? 0 : nodeOf[parent[i]], pn = nodes[p];
      let n = pn.kids.get(label[i]);
      if (n === undefined) {
        n = nodes.length;
        nodes.push({ label: S[label[i]], parent: p, own: 0, kids: new Map(), depth: pn.depth + 1 });
        pn.kids.set(label[i], n);
      }
      nodes[n].own += wgt(i);
      nodeOf[i] = n;
      for (let c = firstChild[i]; c >= 0; c = nextSib[c]) order.push(c);
    }
    for (const n of nodes) n.total = n.own;
    for (let k = nodes.length - 1; k > 0; k--) nodes[nodes[k].parent].total += nodes[k].total;
    flame = nodes; flameZoom = 0;
  }
  let flameBoxes = [];
  function drawFlame() {
    if (!flame) return;
    const c = $('flame'), FH = 17;
    let maxd = 0;
    for (const n of flame) maxd = Math.max(maxd, n.depth);
    const z = flame[flameZoom];
    const h = Math.min(2000, (maxd + 1) * FH + 4), [g, w] = fitCanvas(c, h);
    g.clearRect(0, 0, w, h);
    g.font = '11px system-ui, sans-serif'; g.textBaseline = 'middle';
    flameBoxes = [];
    const place = (n, x, wd) => {
      if (wd < 0.3) return;
      const y = n.depth * FH;
      flameBoxes.push([n, x, y, wd]);
      g.fillStyle = n === flame[0] ? '#ccc' : hue(n.label.split(' ')[0].replace(/ \(fork\)$/, ''));
      g.fillRect(x, y, Math.max(wd - 0.5, 0.5), FH - 1);
      if (wd > 30) {
        g.fillStyle = '#111';
        let t = n.label + ' ' + secs(n.total) + ' s';
        const fit = Math.floor((wd - 6) / 6);
        if (t.length > fit) t = t.slice(0, Math.max(0, fit - 1)) + '…';
        g.fillText(t, x + 3, y + FH / 2);
      }
      let cx = x;
      const kids = [...n.kids.values()].map((k) => flame[k]).sort((a, b) => b.total - a.total);
      for (const k of kids) {
        const kw = n.total > 0 ? wd * k.total / n.total : 0;
        place(k, cx, kw);
        cx += kw;
      }
    };
    // The zoomed node's ancestors span the width; it fills it too.
    for (let a = z.parent; a >= 0; a = flame[a].parent) {
      const n = flame[a], y = n.depth * FH;
      g.fillStyle = '#e4e4e4'; g.fillRect(0, y, w, FH - 1);
      g.fillStyle = '#555'; g.fillText(n.label, 3, y + FH / 2);
      flameBoxes.push([n, 0, y, w]);
    }
    place(z, 0, w);
    $('flame-info').textContent = z.label + ': ' + secs(z.total) + ' s (' + pct(z.total, flame[0].total) + ' % of all)';
  }
  function flameAt(x, y) {
    for (let k = flameBoxes.length - 1; k >= 0; k--) {
      const [n, bx, by, bw] = flameBoxes[k];
      if (x >= bx && x < bx + bw && y >= by && y < by + 17) return n;
    }
    return null;
  }

  /* ---- start ---- */

  function hookUp() {
    $('colour').addEventListener('change', (e) => { colourBy = e.target.value; draw(); });
    let timer = 0;
    $('search').addEventListener('input', (e) => {
      clearTimeout(timer);
      timer = setTimeout(() => search(e.target.value), 200);
    });
    $('show-cp').addEventListener('change', (e) => { cpOn = e.target.checked; draw(); });
    $('align').addEventListener('change', (e) => { setAlign(e.target.checked); draw(); });
    $('reset').addEventListener('click', () => setView(fullLo, fullHi));
    $('table-kind').addEventListener('change', (e) => { tableKind = e.target.value; sortCol = -1; drawTable(); });
    $('flame-weight').addEventListener('change', () => { buildFlame(); drawFlame(); });
    const fc = $('flame');
    fc.addEventListener('click', (ev) => {
      const r = fc.getBoundingClientRect(), n = flameAt(ev.clientX - r.left, ev.clientY - r.top);
      if (n) { flameZoom = flame.indexOf(n); drawFlame(); }
    });
    fc.addEventListener('mousemove', (ev) => {
      const r = fc.getBoundingClientRect(), n = flameAt(ev.clientX - r.left, ev.clientY - r.top);
      if (!n) { tip.hidden = true; return; }
      tip.textContent = '';
      tip.appendChild(el('b', n.label));
      tip.appendChild(document.createTextNode('\n' + secs(n.total) + ' s, ' + pct(n.total, flame[0].total) +
        ' % (own ' + secs(n.own) + ' s)'));
      tip.hidden = false;
      tip.style.left = Math.min(ev.clientX + 14, window.innerWidth - tip.offsetWidth - 4) + 'px';
      tip.style.top = (ev.clientY + 16) + 'px';
    });
    fc.addEventListener('mouseleave', () => { tip.hidden = true; });
    pointer();
  }

  Object.assign(hook, {
    select: (i) => { select(i); if (i >= 0) reveal(i); return i; },
    selected: () => selected,
    search: (q) => search(q),
    criticalPath: () => cpRows().map((r) => r.cells),
    criticalSteps: () => A.cp.filter((s) => s[0] >= 0).map((s) => s[0]),
    // The ideal schedule as drawn: each job's bar, and the races listed.
    deps: () => H.deps ? { cpus: H.deps.cpus, bars: depsBars.map((b) => Object.assign({}, b, { label: S[label[b.i]] })),
                            hints: Array.from($('deps-hints').querySelectorAll('tr')).map((r) => Array.from(r.cells).map((c) => c.textContent)),
                            sers: Array.from($('deps-sers').querySelectorAll('tr')).map((r) => Array.from(r.cells).map((c) => c.textContent)),
                            races: Array.from($('deps-races').querySelectorAll('tr')).map((r) => Array.from(r.cells).map((c) => c.textContent)) } : null,
    visibleRange: () => [v0, v1],
    fullRange: () => [fullLo, fullHi],
    zoom: (a, b) => setView(a, b),
    align: (a) => { $('align').checked = a; setAlign(a); draw(); },
    // Where execution i is drawn, in the page's CSS pixels (scrolled
    // into view first), for tests that point at it with a real mouse.
    barRect: (i) => {
      reveal(i);
      let r = tl.getBoundingClientRect();
      const y = r.top + row[i] * ROW - wrap.scrollTop;
      if (y < 0 || y + ROW > window.innerHeight) {
        window.scrollBy(0, y - window.innerHeight / 2);
        r = tl.getBoundingClientRect();
      }
      const k = r.width / (v1 - v0);
      const x0 = Math.max(0, (sx(i) - v0) * k), x1 = Math.min(r.width, Math.max((ex(i) - v0) * k, x0 + 1));
      return { x: r.left + x0, y: r.top + row[i] * ROW - wrap.scrollTop, w: x1 - x0, h: ROW };
    },
    tooltip: () => (tip.hidden ? null : tip.textContent),
    // Per execution: [row, start, end, parent, rows of its band].
    bars: () => Array.from({ length: N }, (_, i) => [row[i], sx(i), ex(i), parent[i], height[i]]),
    details: () => $('details').textContent,
    argvOf: (i) => args(i),
    lastFrameMs: () => frameMs,
    table: (kind) => { $('table-kind').value = kind; tableKind = kind; sortCol = -1; drawTable(); return $('table').innerText; },
    flame: () => flame && flame.map((n) => ({ label: n.label, total: n.total, depth: n.depth })),
    // Where the flame graph drew the frame of path (labels from the top
    // down), in the page's CSS pixels (scrolled into view).
    flameBox: (path) => {
      const want = ['all', ...path].join('\n');
      const pathOf = (n) => { const p = []; for (; n; n = n.parent >= 0 ? flame[n.parent] : null) p.unshift(n.label); return p.join('\n'); };
      const bx = flameBoxes.find((b) => pathOf(b[0]) === want);
      if (!bx) return null;
      const c = $('flame');
      c.scrollIntoView({ block: 'center' });
      const r = c.getBoundingClientRect();
      return { x: r.left + bx[1], y: r.top + bx[2], w: bx[3], h: 16 };
    },
    flameInfo: () => $('flame-info').textContent,
    profile: () => A.profile || null,
    // The events programs wrote about themselves, as the page holds them
    // (times in µs from the run's start).
    subs: () => Array.from({ length: NS }, (_, u) => ({
      exec: subExec[u], start: subStart[u], dur: subDur[u], depth: subDepth[u], ph: subPh[u] ? 'i' : 'X',
      name: S[subName[u]], cat: S[subCat[u]], args: subArgs[u] >= 0 ? S[subArgs[u]] : null })),
    subsInfo: () => subInfo,
    subsDrawn: () => subsDrawn,
    selectedSub: () => selectedSub,
    // Where event u is drawn, in the page's CSS pixels (its execution
    // scrolled into view), or null when it is too small to be.
    subRect: (u) => {
      const i = subExec[u], r0 = hook.barRect(i), r = tl.getBoundingClientRect(), w = r.width, k = w / (v1 - v0);
      if (!subsShown(i, (sx(i) - v0) * k, (ex(i) - v0) * k, w)) return null;
      const b = subBox(u, k, w);
      return b ? { x: r.left + b[0], y: r0.y + b[2], w: b[1] - b[0], h: b[3] } : null;
    },
  });

  async function main() {
    header();
    hookUp();
    const t = hook.timings = {}, mark = (k) => { t[k] = Math.round(performance.now()); };
    try {
      mark('start');
      const text = await inflate($('pt-data').textContent.trim());
      mark('inflated');
      parse(text);
      mark('parsed');
      if (N !== H.n) throw new Error('the data holds ' + N + ' executions, the header says ' + H.n);
      atAGlance();
      if (subInfo && subInfo.total) {
        fact($('facts'), 'inside the programs', subInfo.total + ' events they wrote about themselves, drawn inside their bars when zoomed in' +
             ' (the search matches them by name)');
        if (subInfo.kept < subInfo.total)
          note('The page holds the ' + subInfo.kept + ' longest of the ' + subInfo.total + ' events programs wrote about themselves, to stay small; proftrace convert -f json has them all.');
        if (subInfo.argsOut) note('The args of ' + subInfo.argsOut + ' events are left out to keep the page small.');
      }
      if (omitted) note('The command lines of ' + omitted + ' short executions are left out to keep the page small (their labels stay); proftrace convert -f csv has them all.');
      fullHiRun = H.wall;
      hook.count = N;
      hook.captures = H.captures.length;
      layout();
      mark('laid out');
      $('align-label').hidden = H.captures.length < 2;
      setAlign(false);
      cpSet = new Set(A.cp.filter((st) => st[0] >= 0).map((st) => st[0]));
      draw();
      mark('drawn');
      // The timeline shows; the rest below it can come a moment later.
      await new Promise((ok) => setTimeout(ok, 0));
      critical();
      levels();
      deps();
      buildFlame();
      drawTable();
      drawFlame();
      mark('complete');
      hook.ready = true;
    } catch (e) {
      hook.error = String(e && e.message || e);
      note('The run could not be drawn: ' + hook.error);
      hook.ready = true;
      throw e;
    }
  }
  main();
})();
