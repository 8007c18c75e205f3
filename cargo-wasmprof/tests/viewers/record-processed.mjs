#!/usr/bin/env node
// record-processed.mjs — turn a Gecko-format profile into the processed-format
// file that profiler.firefox.com's "Download" button saves, using the Firefox
// Profiler front-end's own code as bundled in @firefox-devtools/profiler-cli
// 0.10.0 (dist/profiler-cli.js).  Pinned to that exact bundle (sha256).
//
// Usage:
//   node record-processed.mjs <gecko.json> <out.processed.json>
//        [--sharing=default|all] [--symbolication=unreachable|server[=URL]]
//        [--gz] [--verbose] [--bundle=<path/to/profiler-cli.js>]
//
//   --sharing=default  the checkboxes the Download panel starts with for this
//                      profile (front-end reducer `checkedSharingOptions`:
//                      everything unticked when meta.updateChannel is
//                      release/beta/esr, else everything but private-browsing
//                      data and argument values ticked).   [default]
//   --sharing=all      every checkbox ticked (dispatches the front-end's
//                      UPDATE_SHARING_OPTION action for each one), i.e. only the
//                      unconditional source-content removal happens.
//   --symbolication=…  see the "Symbolication" comment below (default
//                      unreachable: deterministic, no network).
//   --verbose          show the front-end's per-library symbolication warnings.
//   --gz               also write <out>.gz exactly as the front-end's Node
//                      build of utils/gz `compress` does (zlib.gzip).
//
// What runs is front-end code (from the bundle): unserializeProfileOfArbitraryFormat
// (Gecko upgraders + processGeckoProfile + processed upgraders), the redux store
// and its reducers, loadProfile/finalizeProfileView (track visibility, root
// range), doSymbolicateProfile with the front-end SymbolStore, the publish selectors (getRemoveProfileInformation ->
// sanitizePII) and getFilenameString.  The only step NOT taken from the bundle
// is serializeProfileToJsonString, because the CLI bundle does not contain it
// (tree-shaken); it is re-implemented below as in the front-end source
// (src/utils/json-with-typed-arrays.ts: JSON.stringify after turning typed
// arrays into plain arrays).

import fs from 'node:fs';
import path from 'node:path';
import vm from 'node:vm';
import zlib from 'node:zlib';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

// Installed beside this script by `npm ci` (package.json pins the version).
const DEFAULT_BUNDLE = fileURLToPath(
  new URL('./node_modules/@firefox-devtools/profiler-cli/dist/profiler-cli.js', import.meta.url)
);
const PINNED_VERSION = '0.10.0';
const PINNED_SHA256 =
  '42bc638107e9f38d7b0d68d0b83d92ef24a5c781945c0d30ac2d80080d501e48';
const EXPECTED_PROCESSED_VERSION = 75;

function die(msg) {
  process.stderr.write(`record-processed: FATAL: ${msg}\n`);
  process.exit(2);
}
function check(cond, msg) {
  if (!cond) die(msg);
}

// ---------------------------------------------------------------- arguments
const args = process.argv.slice(2);
const positional = args.filter((a) => !a.startsWith('--'));
const flags = Object.fromEntries(
  args
    .filter((a) => a.startsWith('--'))
    .map((a) => {
      const eq = a.indexOf('=');
      return eq === -1 ? [a.slice(2), true] : [a.slice(2, eq), a.slice(eq + 1)];
    })
);
for (const k of Object.keys(flags)) {
  check(['sharing', 'gz', 'bundle', 'symbolication', 'verbose'].includes(k), `unknown option --${k}`);
}
check(positional.length === 2, 'usage: record-processed.mjs <gecko.json> <out.json> [--sharing=default|all] [--gz]');
const [inputPath, outputPath] = positional.map((p) => path.resolve(p));
const sharing = flags.sharing ?? 'default';
check(sharing === 'default' || sharing === 'all', `--sharing must be default or all`);
const bundlePath = path.resolve(flags.bundle ?? DEFAULT_BUNDLE);
const symbolicationArg = flags.symbolication ?? 'unreachable';
check(
  symbolicationArg === 'unreachable' || symbolicationArg === 'server' || symbolicationArg.startsWith('server='),
  '--symbolication must be unreachable, server or server=<url>'
);
const symbolicationMode = symbolicationArg.startsWith('server') ? 'server' : 'unreachable';
const symbolServerUrl = symbolicationArg.startsWith('server=')
  ? symbolicationArg.slice('server='.length)
  : 'https://symbolication.services.mozilla.com';

// ----------------------------------------------------- pin the bundle exactly
const pkg = JSON.parse(
  fs.readFileSync(path.join(path.dirname(bundlePath), '..', 'package.json'), 'utf8')
);
check(
  pkg.name === '@firefox-devtools/profiler-cli' && pkg.version === PINNED_VERSION,
  `expected @firefox-devtools/profiler-cli ${PINNED_VERSION}, found ${pkg.name} ${pkg.version}`
);
let code = fs.readFileSync(bundlePath, 'utf8');
const sha = crypto.createHash('sha256').update(code).digest('hex');
check(
  sha === PINNED_SHA256,
  `bundle sha256 is ${sha}, expected ${PINNED_SHA256}: the minified names this script relies on are only valid for that exact file`
);

// --------------------------------------- anchors: minified name -> its role
// Each anchor is a literal piece of the bundle that must occur exactly once; it
// ties the minified identifier to the front-end function it was built from.
const ANCHORS = [
  // [identifier, front-end name, literal text that must occur exactly once]
  ['UO', 'initializeStore (src/app-logic/create-store)', 'function UO(){let e=null;process.env.NODE_ENV==="development"'],
  ['O3', 'waitingForProfileFromFile', 'function O3(){return{type:"WAITING_FOR_PROFILE_FROM_FILE"}}'],
  ['Dp', 'unserializeProfileOfArbitraryFormat', 'async function Dp(e,t,n={}){try{if(Object.prototype.toString.call(e)==="[object ArrayBuffer]")'],
  ['T3', 'loadProfile(profile, config, initialLoad)', 'function T3(e,t={},n=!1){return async r=>{if(e.threads.length===0){console.error("This profile has no threads.",e)'],
  ['T3', 'loadProfile -> finalizeProfileView when !initialLoad', 'n===!1&&await r(hy(t.browserConnection??null,t.skipSymbolication))'],
  ['hy', 'finalizeProfileView', 'function hy(e=null,t){return async(n,r)=>{if(t&&process.env.NODE_ENV!=="test")throw new Error("Please do not use skipSymbolication outside of tests")'],
  ['EM', 'sanitizePII', 'function EM(e,t,n,r,a){let o={...e.shared,sources:{...e.shared.sources,content:Array(e.shared.sources.content.length).fill(null)}};if(r===null)return{profile:{...e,shared:o},isSanitized:!1'],
  ['pg', 'getShouldSanitizeByDefault', 'function pg(e){switch(e.meta.updateChannel){case"esr":case"release":case"beta":return!0;default:return!1}}'],
  ['kte', 'checkedSharingOptions reducer', 'case"PROFILE_LOADED":{let n=pg(t.profile)?qM():xte();return BM(n)}case"UPDATE_SHARING_OPTION":return{...e,[t.mode]:{...e[t.mode],[t.slug]:t.value}}'],
  ['Wee', 'getCheckedSharingOptions', 'Wee=(e,t)=>AM(e).checkedSharingOptions[t]'],
  ['Yve', 'getFilenameString', 'return`${r} ${d} profile.json`}),xM=e=>(0,ts.createSelector)(t=>Wee(t,e),ke,Nt,Li,pl,$i,Do,VP,KP,JP,'],
  ['$ee', 'getRemoveProfileInformation', '$ee=(e,t)=>Dee[t](e)'],
  ['Xve', 'getSanitizedProfile (per mode)', 'NM=e=>(0,ts.createSelector)(ke,Uee,qee,t=>$ee(t,e),Pt,EM),Xve={download:NM("download"),upload:NM("upload")};'],
  ['Jve', 'getShouldSanitizeByDefault selector', 'Jve=(0,ts.createSelector)(ke,pg);'],
  ['ke', 'getProfile', 'ke=e=>X(Ol(e),"Tried to access the profile before it was loaded.")'],
  ['Kc', 'getDataSource', 'Kc=e=>dr(e).dataSource;'],
  ['Li', 'getHiddenGlobalTracks', 'Li=e=>Ct(e).hiddenGlobalTracks,pl=e=>Ct(e).hiddenLocalTracksByPid,'],
  ['OS', 'getView', 'OS=e=>TS(e).view;'],
  ['Jie', 'finalizeProfileView\'s getSymbolStore (null without IndexedDB, i.e. in Node)', 'function Jie(e,t,n){if(typeof window>"u"||!window.indexedDB)return null;let r=new Bw("perf-html-async-storage",e,t,n);return new pu(r)}'],
  ['pu', 'SymbolStore', 'pu=class{_symbolProvider;constructor(t){this._symbolProvider=t}async getSymbols(t,n,r,a=!1){'],
  ['UH/qH', 'symbolicateProfile: getSymbolicationInfo + buildLibSymbolicationRequestsForAllThreads', 'async function zP(e,t,n,r){let a=UH(e.shared,e.libs),o=qH(a);await t.getSymbols('],
  ['ise', 'profiler-cli symbol store (fetch to a symbol server)', 'function ise(e){return new pu({requestSymbolsFromServer:async t=>dy("symbol server",t,async(n,r)=>(await fetch(e+n,{body:r,method:"POST"})).json()),'],
  ['Gw', 'doSymbolicateProfile', 'async function Gw(e,t,n,r){e(Hie());let a=[];await zP(t,n,'],
  ['jH', 'profile reducer: DONE_SYMBOLICATING sets meta.symbolicated', 'case"DONE_SYMBOLICATING":{if(e===null)throw new Error("Strangely we\'re done symbolicating a non-existent profile.");return{...e,meta:{...e.meta,symbolicated:!0}}}'],
  ['Yve', 'getFilenameString (head)', 'Yve=(0,ts.createSelector)(ke,hr,(e,t)=>{let{startTime:n,product:r}=e.meta,'],
];
for (const [, role, text] of ANCHORS) {
  const first = code.indexOf(text);
  check(first !== -1, `bundle anchor for ${role} not found: ${text.slice(0, 80)}…`);
  check(code.indexOf(text, first + 1) === -1, `bundle anchor for ${role} occurs more than once`);
}
// The processed-format version the bundle produces.
check(
  code.includes(`preprocessedProfileVersion:${EXPECTED_PROCESSED_VERSION}`),
  `bundle does not mention preprocessedProfileVersion:${EXPECTED_PROCESSED_VERSION}`
);

// ------------------------------------ neutralise the CLI entry point, export
check(code.startsWith('#!'), 'bundle does not start with a shebang line');
code = code.slice(code.indexOf('\n') + 1);
const MAIN_CALL =
  'Gle().catch(e=>{console.error(`Fatal error: ${e}`),process.exit(1)});';
check(
  code.indexOf(MAIN_CALL) !== -1 && code.indexOf(MAIN_CALL) === code.lastIndexOf(MAIN_CALL),
  'CLI main() call not found exactly once at the end of the bundle'
);
const EXPORT_KEY = '__recordProcessedInternals';
code = code.replace(
  MAIN_CALL,
  `globalThis.${EXPORT_KEY}={UO,O3,Dp,T3,hy,EM,pg,Wee,Yve,$ee,Xve,Jve,ke,Kc,Li,pl,OS,Jie,pu,UH,qH,Gw,ise};`
);

const wrapper = vm.runInThisContext(
  `(function (exports, require, module, __filename, __dirname) {${code}\n})`,
  { filename: bundlePath }
);
const mod = { exports: {} };
wrapper(mod.exports, createRequire(bundlePath), mod, bundlePath, path.dirname(bundlePath));
const I = globalThis[EXPORT_KEY];
check(I && typeof I === 'object', 'bundle did not export its internals');
delete globalThis[EXPORT_KEY];
for (const [k, v] of Object.entries(I)) {
  check(typeof v === 'function' || (k === 'Xve' && v && typeof v === 'object'), `internal ${k} is not a function`);
}
check(typeof I.Xve.download === 'function', 'getSanitizedProfile.download missing');

// ---------------------------------------------------- the front-end's flow
// Web front-end, "Load a profile from file" (src/actions/receive-profile.ts
// retrieveProfileFromFile): WAITING_FOR_PROFILE_FROM_FILE, read bytes,
// unserializeProfileOfArbitraryFormat(bytes, file.name), viewProfile(profile)
// == loadProfile(profile, {browserConnection: null}, false), which dispatches
// PROFILE_LOADED and then finalizeProfileView.
const store = I.UO();
store.dispatch(I.O3());
const bytes = fs.readFileSync(inputPath);
const profile = await I.Dp(new Uint8Array(bytes), path.basename(inputPath));
check(profile !== undefined, 'unserializeProfileOfArbitraryFormat returned undefined');
check(
  profile.meta.preprocessedProfileVersion === EXPECTED_PROCESSED_VERSION,
  `processed profile has preprocessedProfileVersion ${profile.meta.preprocessedProfileVersion}`
);
await store.dispatch(I.T3(profile, { browserConnection: null }, false));
let state = store.getState();
check(I.OS(state).phase === "DATA_LOADED", `view phase is ${I.OS(state).phase}, not DATA_LOADED (finalizeProfileView did not complete)`);
check(I.Kc(state) === 'from-file', `dataSource is ${I.Kc(state)}, not from-file`);
check(I.ke(state) === profile, 'store does not hold the loaded profile');

// Symbolication.  In the browser, finalizeProfileView runs
// doSymbolicateProfile(dispatch, profile, symbolStore) when
// meta.symbolicated === false (every Firefox-recorded profile: processing sets
// it to !!meta.presymbolicated), and awaits it.  In Node its getSymbolStore
// returns null (no IndexedDB), so it was skipped above; run the same
// doSymbolicateProfile here with the front-end's SymbolStore class (`pu`).
//   --symbolication=unreachable (default): the symbol provider rejects every
//     request, as the browser's does when the symbol server cannot be reached
//     and there is no browser connection (from-file).  The front-end then
//     warns per library, leaves the native frames as hex addresses and still
//     marks the profile symbolicated (DONE_SYMBOLICATING).  Deterministic.
//   --symbolication=server[=URL]: ask a real symbol server, with the CLI's
//     own fetch-based provider (`ise`), default https://symbolication.services.mozilla.com
//     (what profiler.firefox.com uses).  Output then depends on that server.
const symbolicationRequests = I.qH(I.UH(profile.shared, profile.libs));
let symbolicationWarnings = 0;
if (profile.meta.symbolicated === false) {
  let symbolStore;
  if (symbolicationMode === 'unreachable') {
    const unreachable = async () => {
      throw new Error('symbol server unreachable (record-processed.mjs --symbolication=unreachable)');
    };
    const noBrowser = async () => {
      throw new Error('No connection to the browser, cannot run querySymbolicationApi');
    };
    symbolStore = new I.pu({
      requestSymbolsFromServer: unreachable,
      requestSymbolsFromBrowser: noBrowser,
      requestSymbolsViaSymbolTableFromBrowser: noBrowser,
    });
  } else {
    symbolStore = I.ise(symbolServerUrl);
  }
  const origWarn = console.warn;
  console.warn = (...a) => {
    symbolicationWarnings++;
    if (flags.verbose) origWarn(...a);
  };
  try {
    await I.Gw(store.dispatch, I.ke(store.getState()), symbolStore);
  } finally {
    console.warn = origWarn;
  }
  state = store.getState();
  check(I.ke(state).meta.symbolicated === true, 'DONE_SYMBOLICATING did not mark the profile symbolicated');
}

// The Download panel's checkboxes.
const CHECKBOXES = [
  'includeHiddenThreads', 'includeAllTabs', 'includeFullTimeRange',
  'includeScreenshots', 'includeUrls', 'includeExtension',
  'includePreferenceValues', 'includePrivateBrowsingData', 'includeArgumentValues',
];
const initialOptions = I.Wee(state, 'download');
check(
  JSON.stringify(Object.keys(initialOptions).sort()) === JSON.stringify([...CHECKBOXES].sort()),
  `unexpected sharing options ${Object.keys(initialOptions)}`
);
if (sharing === 'all') {
  // src/actions/publish.ts updateSharingOption(mode, slug, value)
  for (const slug of CHECKBOXES) {
    store.dispatch({ type: 'UPDATE_SHARING_OPTION', mode: 'download', slug, value: true });
  }
  state = store.getState();
}
const options = I.Wee(state, 'download');

// encodeSanitizedProfile('download'): getSanitizedProfile(state, mode).profile
const sanitized = I.Xve.download(state);
const removeInfo = I.$ee(state, 'download');
const outProfile = sanitized.profile;
check(
  outProfile.meta.preprocessedProfileVersion === EXPECTED_PROCESSED_VERSION,
  'sanitized profile has an unexpected version'
);

// serializeProfileToJsonString(profile) ==
// jsonEncodeObjectWithTypedArraysAsRegularArrays(profile): JSON.stringify after
// replacing every typed array (not DataView) by Array.from(it), without
// mutating the input.  NOT in the CLI bundle, hence this re-implementation.
let typedArraysSeen = 0;
function rewriteTypedArrays(value) {
  if (value === null || typeof value !== 'object') return value;
  if (ArrayBuffer.isView(value) && !(value instanceof DataView)) {
    typedArraysSeen++;
    return Array.from(value);
  }
  if (Array.isArray(value)) {
    let result = null;
    for (let i = 0; i < value.length; i++) {
      const el = value[i];
      if (el === null || typeof el !== 'object') continue;
      const r = rewriteTypedArrays(el);
      if (r !== el) (result ??= value.slice())[i] = r;
    }
    return result ?? value;
  }
  let result = null;
  for (const key in value) {
    if (!Object.hasOwn(value, key)) continue;
    const el = value[key];
    if (el === null || typeof el !== 'object') continue;
    const r = rewriteTypedArrays(el);
    if (r !== el) (result ??= { ...value })[key] = r;
  }
  return result ?? value;
}
const json = JSON.stringify(rewriteTypedArrays(outProfile));

fs.mkdirSync(path.dirname(outputPath), { recursive: true });
fs.writeFileSync(outputPath, json);
if (flags.gz) {
  // src/utils/gz.ts (Node build): zlib.gzip(string)
  fs.writeFileSync(outputPath + '.gz', zlib.gzipSync(json));
}

// Round trip through the front-end's own loader: must be accepted as-is.
const reread = await I.Dp(new Uint8Array(fs.readFileSync(outputPath)), path.basename(outputPath));
check(
  reread && reread.meta.preprocessedProfileVersion === EXPECTED_PROCESSED_VERSION,
  'the written file does not unserialize back to a v75 profile'
);

process.stderr.write(
  [
    `bundle: ${pkg.name}@${pkg.version} sha256 ${sha}`,
    `input: ${inputPath}`,
    `meta.updateChannel: ${profile.meta.updateChannel}; sanitize by default: ${I.Jve(state)}`,
    `meta.symbolicated as processed: ${profile.meta.symbolicated}; libraries needing symbolication: ${symbolicationRequests.length}; symbolication (${symbolicationMode}${symbolicationMode === 'server' ? ' ' + symbolServerUrl : ''}) warnings: ${symbolicationWarnings}; saved meta.symbolicated: ${outProfile.meta.symbolicated}`,
    `sharing (${sharing}): ${JSON.stringify(options)}`,
    `remove-profile-information: ${removeInfo === null ? 'null (nothing but source contents removed)' : JSON.stringify(removeInfo, (k, v) => (v instanceof Set ? [...v] : v))}`,
    `isSanitized: ${sanitized.isSanitized}; threads in/out: ${profile.threads.length}/${outProfile.threads.length}`,
    `typed arrays converted during serialization: ${typedArraysSeen}`,
    `front-end download file name: "${I.Yve(state)}.gz" (gzip of the JSON written here)`,
    `wrote ${outputPath} (${json.length} bytes)${flags.gz ? ' and .gz' : ''}`,
  ].join('\n') + '\n'
);
