// wasmprof flame graph: zoom on click, search, details on hover.
(function () {
  'use strict';
  // The script's own <svg>: the document itself, or the graph in a page.
  var root = document.currentScript ? document.currentScript.closest('svg') : null;
  if (!root) root = document.documentElement.tagName === 'svg' ? document.documentElement : document.querySelector('svg[data-total]');
  var NS = 'http://www.w3.org/2000/svg';
  var width = parseFloat(root.getAttribute('width'));
  var side = 10;
  var usable = width - 2 * side;
  var total = parseFloat(root.getAttribute('data-total')) || 1;
  var frames = Array.prototype.slice.call(root.querySelectorAll('g.f'));
  var details = root.querySelector('#details');
  var matched = root.querySelector('#matched');
  var reset = root.querySelector('#reset');
  var searchButton = root.querySelector('#search');
  var CHAR = 7.2;
  var zoomed = null;
  var pattern = null;

  function attr(g, name) { return parseFloat(g.getAttribute('data-' + name)); }
  function titleOf(g) { return g.querySelector('title').textContent; }
  function nameOf(g) {
    var t = titleOf(g);
    var at = t.indexOf(' (');
    return at < 0 ? t : t.slice(0, at);
  }

  function fit(name, w) {
    var room = Math.floor((w - 6) / CHAR);
    if (room < 3) return '';
    if (name.length <= room) return name;
    return '..' + name.slice(name.length - (room - 2));
  }

  // Lays every frame out for the window [x0, x0 + w0) of the weight.
  function layout(x0, w0, depth) {
    var scale = usable / w0;
    frames.forEach(function (g) {
      var x = attr(g, 'x'), w = attr(g, 'w'), d = attr(g, 'd');
      var rect = g.querySelector('rect'), text = g.querySelector('text');
      var inside = x >= x0 - 1e-9 && x + w <= x0 + w0 + 1e-6;
      var around = x <= x0 + 1e-9 && x + w >= x0 + w0 - 1e-6 && d < depth;
      if (!inside && !around) {
        g.classList.add('hidden');
        return;
      }
      g.classList.remove('hidden');
      var px = around ? side : side + (x - x0) * scale;
      var pw = around ? usable : w * scale;
      rect.setAttribute('x', px.toFixed(2));
      rect.setAttribute('width', pw.toFixed(2));
      text.setAttribute('x', (px + 3).toFixed(2));
      text.textContent = fit(nameOf(g), pw);
      if (around) g.classList.add('faded'); else g.classList.remove('faded');
    });
  }

  function zoom(g) {
    zoomed = g;
    layout(attr(g, 'x'), attr(g, 'w') || 1e-9, attr(g, 'd'));
    reset.classList.remove('hidden');
    if (pattern) search(pattern);
  }

  function unzoom() {
    zoomed = null;
    layout(0, total, 0);
    reset.classList.add('hidden');
    if (pattern) search(pattern);
  }

  // Highlights the frames whose name matches; the share counts each part
  // of the graph once, however many matching frames are nested in it.
  function search(text) {
    var re;
    try { re = new RegExp(text); } catch (e) { matched.textContent = 'not a regular expression'; return; }
    pattern = text;
    var spans = [];
    frames.forEach(function (g) {
      var rect = g.querySelector('rect');
      if (!rect.hasAttribute('data-fill')) rect.setAttribute('data-fill', rect.getAttribute('fill'));
      if (re.test(nameOf(g)) && attr(g, 'd') > 0) {
        rect.setAttribute('fill', 'rgb(230,0,230)');
        spans.push([attr(g, 'x'), attr(g, 'x') + attr(g, 'w')]);
      } else {
        rect.setAttribute('fill', rect.getAttribute('data-fill'));
      }
    });
    spans.sort(function (a, b) { return a[0] - b[0]; });
    var sum = 0, end = -Infinity;
    spans.forEach(function (s) {
      if (s[0] >= end) { sum += s[1] - s[0]; end = s[1]; }
      else if (s[1] > end) { sum += s[1] - end; end = s[1]; }
    });
    var base = zoomed ? attr(zoomed, 'w') : total;
    matched.textContent = 'Matched: ' + (100 * sum / (total || 1)).toFixed(1) + '% of all' +
      (zoomed ? ', ' + (100 * sum / (base || 1)).toFixed(1) + '% of the zoomed frame' : '');
    searchButton.textContent = 'Clear';
  }

  function clearSearch() {
    pattern = null;
    frames.forEach(function (g) {
      var rect = g.querySelector('rect');
      if (rect.hasAttribute('data-fill')) rect.setAttribute('fill', rect.getAttribute('data-fill'));
    });
    matched.textContent = ' ';
    searchButton.textContent = 'Search';
  }

  // One listener each for the whole graph, not three per frame.
  var group = root.querySelector('#frames');
  function frameOf(event) { return event.target.closest ? event.target.closest('g.f') : null; }
  group.addEventListener('click', function (e) { var g = frameOf(e); if (g) zoom(g); });
  group.addEventListener('mouseover', function (e) { var g = frameOf(e); if (g) details.textContent = titleOf(g); });
  group.addEventListener('mouseout', function () { details.textContent = ' '; });
  reset.addEventListener('click', unzoom);
  searchButton.addEventListener('click', function () {
    if (pattern) { clearSearch(); return; }
    var text = window.prompt('Search frames by name (a regular expression):', '');
    if (text) search(text);
  });
  window.addEventListener('keydown', function (e) {
    if ((e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); searchButton.dispatchEvent(new Event('click')); }
    if (e.key === 'Escape') { clearSearch(); unzoom(); }
  });
  // For tests and for pages that embed the graph.
  window.__wasmprofFlame = { zoom: zoom, unzoom: unzoom, search: search, clearSearch: clearSearch, frames: frames };
})();
