// wasmprof's overlay under --serve: a "Save profile" button that sends the
// profile of everything since the page loaded back to the server that
// served the page (with this run's token; nowhere else), and a "Start
// recording" button that opens a window: "Stop and save" then sends the
// profile of what ran in it alone. `wasmprof.save()`, `wasmprof.start()`
// and `wasmprof.stop()` do the same from the console.
(function () {
  'use strict';
  const host = globalThis.__wasmprofHost;
  const resolutionNanos = host.measureResolution();
  let status = null;
  let recordButton = null;
  // The snapshot a recording window opened with, and when.
  let opening = null;

  function say(text, level) {
    if (status) status.textContent = text;
    console[level || 'info'](`wasmprof: ${text}`);
  }

  async function upload(body, window) {
    const headers = {
      'Content-Type': 'application/octet-stream',
      'X-Wasmprof-Token': host.config.token,
      'X-Wasmprof-User-Agent': navigator.userAgent,
      'X-Wasmprof-Resolution': String(resolutionNanos),
    };
    if (window) headers['X-Wasmprof-Window'] = `${window.start}:${window.end}:${window.openingLength}`;
    const response = await fetch('/__wasmprof/profile', { method: 'POST', headers, body });
    const what = window
      ? `window of ${((window.end - window.start) / 1000).toFixed(2)} s saved`
      : `profile saved (${body.length} bytes)`;
    say(response.ok ? what : `not saved: ${await response.text()}`, response.ok ? 'info' : 'warn');
    return response.ok;
  }

  function notLoaded() {
    say('no instrumented module has been loaded yet', 'warn');
    return false;
  }

  async function save() {
    const bytes = host.snapshotBytes();
    if (bytes === null) return notLoaded();
    return upload(bytes, null);
  }

  // Opens a window: the profile saved by stop() holds only what runs from
  // now on. The frames so far are forgotten in the same task.
  function start() {
    const bytes = host.snapshotBytes();
    if (bytes === null) return notLoaded();
    host.resetFrames();
    opening = { bytes, at: performance.now() };
    if (recordButton) recordButton.textContent = 'Stop and save';
    say('recording');
    return true;
  }

  async function stop() {
    if (opening === null) {
      say('not recording: start() (or "Start recording") opens a window first', 'warn');
      return false;
    }
    const closing = host.snapshotBytes();
    const end = performance.now();
    const body = new Uint8Array(opening.bytes.length + closing.length);
    body.set(opening.bytes, 0);
    body.set(closing, opening.bytes.length);
    const window = { start: opening.at, end, openingLength: opening.bytes.length };
    opening = null;
    if (recordButton) recordButton.textContent = 'Start recording';
    return upload(body, window);
  }

  globalThis.wasmprof = { save, start, stop };

  function button(id, text, onClick) {
    const b = document.createElement('button');
    b.id = id;
    b.textContent = text;
    b.style.cssText = 'font:inherit;cursor:pointer';
    b.addEventListener('click', onClick);
    return b;
  }

  function overlay() {
    const box = document.createElement('div');
    box.id = 'wasmprof-overlay';
    box.style.cssText = 'position:fixed;right:12px;bottom:12px;z-index:2147483647;font:13px system-ui,sans-serif;' +
      'background:#1d2330;color:#fff;padding:8px 10px;border-radius:6px;box-shadow:0 2px 8px #0006;display:flex;gap:8px;align-items:center';
    recordButton = button('wasmprof-record', 'Start recording', () => { if (opening) stop(); else start(); });
    status = document.createElement('span');
    status.id = 'wasmprof-status';
    status.textContent = 'wasmprof';
    // The box is anchored at its right edge: the status, whose text changes
    // when an upload answers, stands left of the buttons so that it never
    // moves them under a pointer about to click.
    box.append(status, button('wasmprof-save', 'Save profile', () => { save(); }), recordButton);
    document.body.append(box);
  }
  if (document.body) overlay();
  else window.addEventListener('DOMContentLoaded', overlay);
})();
