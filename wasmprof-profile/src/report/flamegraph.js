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
  // The frame's whole name, `(script:line)` and all: the title adds the
  // figures after it.
  function nameOf(g) {
    var n = g.getAttribute('data-n');
    if (n !== null) return n;
    var t = titleOf(g);
    var at = t.lastIndexOf(' (');
    return at < 0 ? t : t.slice(0, at);
  }

  // A path's last segment outside brackets: the function's own name.
  function ownName(name) {
    var depth = 0, start = 0;
    for (var i = 0; i < name.length; i++) {
      var c = name[i];
      if (c === '<' || c === '(' || c === '[') depth++;
      else if (c === '>' || c === ')' || c === ']') depth--;
      else if (c === ':' && depth === 0 && name[i + 1] === ':') start = i + 2;
    }
    return name.slice(start);
  }

  // As the SVG was written (flamegraph.rs `fit`): the name, else the
  // function's own name, cut at its end if need be, else nothing.
  function fit(name, w) {
    var room = Math.floor((w - 6) / CHAR);
    if (room < 3) return '';
    if (name.length <= room) return name;
    var own = ownName(name);
    if (own.length <= room) return own;
    if (room < 5) return '';
    return own.slice(0, room - 2) + '..';
  }

  // Lays every frame out for the window [x0, x0 + w0) of the weight.
  function layout(x0, w0, depth) {
    var scale = usable / w0;
    drawRuler(x0, w0);
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

  // A flame chart's time ruler: ticks at round times across the window
  // shown, [x0, x0 + w0) nanoseconds from the first sample.
  var ruler = root.querySelector('#ruler');
  function timeText(nanos) {
    var units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']];
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(nanos) >= units[i][0] || i === units.length - 1) {
        var v = nanos / units[i][0];
        return parseFloat(v.toPrecision(4)) + ' ' + units[i][1];
      }
    }
  }
  function drawRuler(x0, w0) {
    if (!ruler) return;
    while (ruler.firstChild) ruler.removeChild(ruler.firstChild);
    var y = parseFloat(ruler.getAttribute('data-y'));
    var height = parseFloat(ruler.getAttribute('data-height'));
    // About ten ticks, at 1, 2 or 5 times a power of ten.
    var rough = w0 / 10, power = Math.pow(10, Math.floor(Math.log10(rough || 1)));
    var step = [1, 2, 5, 10].map(function (m) { return m * power; }).find(function (s) { return s >= rough; });
    for (var t = Math.ceil(x0 / step) * step; t <= x0 + w0 + 1e-9; t += step) {
      var px = side + (t - x0) * usable / w0;
      var line = document.createElementNS(NS, 'line');
      line.setAttribute('x1', px.toFixed(2)); line.setAttribute('x2', px.toFixed(2));
      line.setAttribute('y1', y + 12); line.setAttribute('y2', y + height);
      line.setAttribute('stroke', '#ddd');
      var label = document.createElementNS(NS, 'text');
      label.setAttribute('x', (px + 2).toFixed(2)); label.setAttribute('y', y + 10);
      label.setAttribute('fill', '#666');
      label.textContent = timeText(t);
      ruler.appendChild(line);
      ruler.appendChild(label);
    }
  }
  drawRuler(0, total);

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
    var all = covered(spans, 0, total);
    var text = 'Matched: ' + percent(all, total) + ' of all';
    if (zoomed) {
      // Only what lies inside the zoomed frame, over the zoomed frame.
      var x0 = attr(zoomed, 'x'), w0 = attr(zoomed, 'w');
      text += ', ' + percent(covered(spans, x0, x0 + w0), w0) + ' of the zoomed frame';
    }
    matched.textContent = text;
    searchButton.textContent = 'Clear';
    showDetails(details.getAttribute('data-text') || ' ');
  }

  // The weight that sorted `spans` cover inside [from, to), each part once
  // however many matching frames nest in it.
  function covered(spans, from, to) {
    var sum = 0, end = from;
    spans.forEach(function (s) {
      var a = Math.max(s[0], end), b = Math.min(s[1], to);
      if (b > a) { sum += b - a; end = b; }
    });
    return sum;
  }

  function percent(part, whole) {
    return (100 * Math.min(1, part / (whole || 1))).toFixed(1) + '%';
  }

  // The hover line, cut so that it never runs into the "Matched:" text
  // at the right.
  function showDetails(text) {
    details.setAttribute('data-text', text);
    var start = parseFloat(details.getAttribute('x'));
    var end = width - side - matched.textContent.trim().length * CHAR - 2 * CHAR;
    var room = Math.max(0, Math.floor((end - start) / CHAR));
    details.textContent = text.length <= room ? text : text.slice(0, Math.max(0, room - 2)) + '..';
  }

  function clearSearch() {
    pattern = null;
    frames.forEach(function (g) {
      var rect = g.querySelector('rect');
      if (rect.hasAttribute('data-fill')) rect.setAttribute('fill', rect.getAttribute('data-fill'));
    });
    matched.textContent = ' ';
    searchButton.textContent = 'Search';
    showDetails(details.getAttribute('data-text') || ' ');
  }

  // One listener each for the whole graph, not three per frame.
  var group = root.querySelector('#frames');
  function frameOf(event) { return event.target.closest ? event.target.closest('g.f') : null; }
  group.addEventListener('click', function (e) { var g = frameOf(e); if (g) zoom(g); });
  group.addEventListener('mouseover', function (e) { var g = frameOf(e); if (g) showDetails(titleOf(g)); });
  group.addEventListener('mouseout', function () { showDetails(' '); });
  reset.addEventListener('click', unzoom);
  searchButton.addEventListener('click', function () {
    if (pattern) { clearSearch(); return; }
    var text = window.prompt('Search frames by name (a regular expression):', '');
    if (text) search(text);
  });
  // Ctrl-F searches the graph when the graph is the document. In a page
  // (the HTML report), the browser's own find stays, and keys typed in a
  // field are the field's.
  var standalone = root === document.documentElement;
  window.addEventListener('keydown', function (e) {
    var target = e.target;
    if (target && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName || ''))) return;
    if (standalone && (e.ctrlKey || e.metaKey) && e.key === 'f') { e.preventDefault(); searchButton.dispatchEvent(new Event('click')); }
    if (e.key === 'Escape') { clearSearch(); unzoom(); }
  });
  // For tests and for pages that embed the graph.
  window.__wasmprofFlame = {
    zoom: zoom, unzoom: unzoom, search: search, clearSearch: clearSearch, frames: frames,
    showDetails: showDetails, fit: fit,
  };
})();
