// Import a file with speedscope's own importer, as its web app does when a
// file is dropped on it, and fail on any warning or error.
//
//     node speedscope-check.js SPEEDSCOPE_DIR FILE...
//
// SPEEDSCOPE_DIR is the npm package `speedscope` (node_modules/speedscope).
// Its release is one browser bundle with no exports, so the importer is
// found by name in the bundle's export table (importProfileGroupFromText)
// and the bundle runs under a few do-nothing browser stand-ins; the app's
// own start (rendering into document.body) is cut off.  Exit 77 (skipped)
// when the bundle does not look as expected.
'use strict';
const fs = require('fs');
const path = require('path');
const vm = require('vm');

function skip(why) {
  console.log('speedscope-check: skipped: ' + why);
  process.exit(77);
}

const dir = process.argv[2];
const files = process.argv.slice(3);
const rel = path.join(dir, 'dist', 'release');
let bundle;
try {
  const js = fs.readdirSync(rel).find(f => /^speedscope-.*\.js$/.test(f));
  if (!js) skip('no speedscope-*.js in ' + rel);
  bundle = fs.readFileSync(path.join(rel, js), 'utf8');
} catch (e) {
  skip(String(e));
}
const exp = /importProfileGroupFromText:\(\)=>([\w$]+)/.exec(bundle);
if (!exp) skip('importer not found in the bundle');
// The module holding the importer is initialized lazily by the first
// `NAME=fn(()=>{` after its export table.
const init = /([\w$]+)=[\w$]+\(\(\)=>\{/.exec(bundle.slice(exp.index));
const start = bundle.lastIndexOf('console.log(`speedscope v');
const end = bundle.lastIndexOf('})();');
if (!init || start < 0 || end < start) skip('bundle layout not recognized');
const src = bundle.slice(0, start) +
  `globalThis.__ssImport=async(a,b)=>{${init[1]}();return ${exp[1]}(a,b)};` +
  bundle.slice(end);

const noop = () => {};
const any = () => new Proxy(function () {}, {
  get: (t, k) => (k === Symbol.toPrimitive ? () => '' : any()),
  apply: () => any(),
});
const sandbox = {
  console: {log: noop, info: noop, warn: noop, error: noop},
  document: any(), navigator: {userAgent: 'node', platform: 'linux'},
  localStorage: {getItem: () => null, setItem: noop},
  location: {hash: '', search: '', href: 'file:///'},
  addEventListener: noop, removeEventListener: noop,
  requestAnimationFrame: noop, devicePixelRatio: 1,
  matchMedia: () => ({matches: false, addEventListener: noop, addListener: noop}),
  TextDecoder, TextEncoder, setTimeout, clearTimeout, URL, WebAssembly,
};
sandbox.window = sandbox;
sandbox.self = sandbox;
sandbox.globalThis = sandbox;
vm.createContext(sandbox);
try {
  vm.runInContext(src, sandbox, {filename: 'speedscope.js'});
} catch (e) {
  skip('bundle does not load here: ' + e);
}

(async () => {
  let bad = 0;
  for (const f of files) {
    const warnings = [];
    sandbox.console.warn = (...a) => warnings.push(a.join(' '));
    sandbox.console.error = (...a) => warnings.push(a.join(' '));
    let g;
    try {
      g = await sandbox.__ssImport(path.basename(f), fs.readFileSync(f, 'utf8'));
    } catch (e) {
      console.log(`${f}: speedscope failed: ${e}`);
      bad++;
      continue;
    }
    if (!g || !g.profiles.length) {
      console.log(`${f}: speedscope did not recognize it`);
      bad++;
      continue;
    }
    let frames = 0, weight = 0;
    for (const p of g.profiles) {
      weight += p.getTotalWeight();
      p.forEachFrame(() => frames++);
    }
    console.log(`${f}: speedscope: ${g.profiles.length} profiles, ` +
                `${frames} frames, total weight ${weight}, ` +
                `${warnings.length} warnings`);
    for (const w of warnings.slice(0, 5)) console.log('  ' + w.slice(0, 300));
    if (warnings.length) bad++;
  }
  process.exit(bad ? 1 : 0);
})();
