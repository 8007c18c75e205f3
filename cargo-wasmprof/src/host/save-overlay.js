// wasmprof's overlay under --serve: a "Save profile" button, and
// `wasmprof.save()` for the console, that send the profile back to the
// server that served the page (with this run's token; nowhere else).
(function () {
  'use strict';
  const host = globalThis.__wasmprofHost;
  const resolutionNanos = host.measureResolution();
  let status = null;

  async function save() {
    const bytes = host.snapshotBytes();
    if (bytes === null) {
      const why = 'wasmprof: no instrumented module has been loaded yet';
      if (status) status.textContent = why;
      console.warn(why);
      return false;
    }
    const response = await fetch('/__wasmprof/profile', {
      method: 'POST',
      headers: {
        'Content-Type': 'application/octet-stream',
        'X-Wasmprof-Token': host.config.token,
        'X-Wasmprof-User-Agent': navigator.userAgent,
        'X-Wasmprof-Resolution': String(resolutionNanos),
      },
      body: bytes,
    });
    const said = response.ok ? `profile saved (${bytes.length} bytes)` : `not saved: ${await response.text()}`;
    if (status) status.textContent = said;
    console.info(`wasmprof: ${said}`);
    return response.ok;
  }
  globalThis.wasmprof = { save };

  function overlay() {
    const box = document.createElement('div');
    box.id = 'wasmprof-overlay';
    box.style.cssText = 'position:fixed;right:12px;bottom:12px;z-index:2147483647;font:13px system-ui,sans-serif;' +
      'background:#1d2330;color:#fff;padding:8px 10px;border-radius:6px;box-shadow:0 2px 8px #0006;display:flex;gap:8px;align-items:center';
    const button = document.createElement('button');
    button.id = 'wasmprof-save';
    button.textContent = 'Save profile';
    button.style.cssText = 'font:inherit;cursor:pointer';
    button.addEventListener('click', () => { save(); });
    status = document.createElement('span');
    status.id = 'wasmprof-status';
    status.textContent = 'wasmprof';
    box.append(button, status);
    document.body.append(box);
  }
  if (document.body) overlay();
  else window.addEventListener('DOMContentLoaded', overlay);
})();
