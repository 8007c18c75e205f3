// wasmprof's HTML report: the flat profile, the call graph and the run's
// metadata, built from the JSON in the page. Nothing is fetched.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('data').textContent);
  var byId = {};
  data.functions.forEach(function (f) {
    f.selfShare = data.totalNanos > 0 ? (100 * f.self) / data.totalNanos : 0;
    f.place = f.file + ':' + f.line;
    byId[f.id] = f;
  });
  var callersOf = {}, calleesOf = {};
  data.arcs.forEach(function (a) {
    (callersOf[a.callee] = callersOf[a.callee] || []).push(a);
    if (a.caller !== null) (calleesOf[a.caller] = calleesOf[a.caller] || []).push(a);
  });

  function duration(nanos) {
    if (!data.timed) return '-';
    var units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']];
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(nanos) >= units[i][0] || i === units.length - 1) {
        var v = nanos / units[i][0];
        return (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ' + units[i][1];
      }
    }
  }
  function count(n) { return data.counted && n !== null ? n.toLocaleString('en-US') : '-'; }
  function el(tag, attrs, text) {
    var e = document.createElement(tag);
    Object.keys(attrs || {}).forEach(function (k) { e.setAttribute(k, attrs[k]); });
    if (text !== undefined) e.textContent = text;
    return e;
  }
  function fnLink(id) {
    var f = byId[id];
    var a = el('a', { class: 'fn', href: '#f=' + id, 'data-id': id }, f ? f.name : '<unknown>');
    return a;
  }

  // ---- Header and run metadata --------------------------------------------
  document.getElementById('run-line').textContent = data.runLine;
  var notes = document.getElementById('notes');
  data.notes.forEach(function (n) { notes.appendChild(el('li', {}, n)); });
  var meta = document.getElementById('meta');
  var m = data.meta;
  [
    ['package', m.package], ['module', m.module], ['host', m.host], ['entry', m.entry],
    ['command', m.command], ['timer', m.timer],
    ['clock resolution', m.resolutionNanos != null ? duration(m.resolutionNanos) : null],
    ['sample interval', m.sampleIntervalNanos != null ? duration(m.sampleIntervalNanos) : null],
    ['complete', m.complete ? 'yes' : 'no: ' + (m.incompleteReason || '')],
    ['exit status', String(m.exitCode)], ['wall time', duration(m.wallNanos)],
  ].forEach(function (row) {
    if (row[1] === null || row[1] === undefined) return;
    var tr = el('tr');
    tr.appendChild(el('td', {}, row[0]));
    tr.appendChild(el('td', {}, row[1]));
    meta.appendChild(tr);
  });

  // ---- Flat profile: sortable, filterable ---------------------------------
  var MAX_ROWS = 2000;
  var body = document.querySelector('#functions tbody');
  var filter = document.getElementById('filter');
  var shown = document.getElementById('shown');
  var sortKey = data.timed ? 'self' : 'calls';
  var descending = true;

  function matcher(text) {
    if (!text) return function () { return true; };
    var regex = /^\/(.*)\/$/.exec(text);
    if (regex) {
      try { var re = new RegExp(regex[1]); return function (f) { return re.test(f.name); }; } catch (e) { /* as text */ }
    }
    var lower = text.toLowerCase();
    return function (f) { return f.name.toLowerCase().indexOf(lower) >= 0 || f.place.toLowerCase().indexOf(lower) >= 0; };
  }

  function renderTable() {
    var keep = matcher(filter.value.trim());
    var rows = data.functions.filter(keep);
    rows.sort(function (a, b) {
      var x = a[sortKey], y = b[sortKey];
      var c = typeof x === 'string' ? x.localeCompare(y) : x - y;
      if (c === 0) c = a.name.localeCompare(b.name);
      return descending ? -c : c;
    });
    var fragment = document.createDocumentFragment();
    rows.slice(0, MAX_ROWS).forEach(function (f) {
      var tr = el('tr', f.open ? { class: 'open' } : {});
      tr.appendChild(el('td', {}, duration(f.self)));
      tr.appendChild(el('td', {}, data.timed ? f.selfShare.toFixed(1) + '%' : '-'));
      tr.appendChild(el('td', {}, duration(f.total)));
      tr.appendChild(el('td', {}, count(f.calls)));
      var name = el('td');
      name.appendChild(fnLink(f.id));
      if (f.cycle) name.appendChild(document.createTextNode(' <cycle ' + f.cycle + '>'));
      if (f.async) name.appendChild(document.createTextNode(' (async)'));
      if (f.timeMark) name.appendChild(el('span', { class: 'time-mark', title: 'time ' + f.timeKind }, ' ' + f.timeMark));
      tr.appendChild(name);
      tr.appendChild(el('td', { class: 'where' }, f.place));
      fragment.appendChild(tr);
    });
    body.replaceChildren(fragment);
    shown.textContent = rows.length + ' of ' + data.functions.length + ' functions' +
      (rows.length > MAX_ROWS ? ' (the first ' + MAX_ROWS + ' shown; filter to see others)' : '');
    document.querySelectorAll('#functions th').forEach(function (th) {
      th.classList.remove('sorted-asc', 'sorted-desc');
      if (th.getAttribute('data-key') === sortKey) th.classList.add(descending ? 'sorted-desc' : 'sorted-asc');
    });
  }
  document.querySelectorAll('#functions th').forEach(function (th) {
    th.addEventListener('click', function () {
      var key = th.getAttribute('data-key');
      if (key === sortKey) descending = !descending;
      else { sortKey = key; descending = th.hasAttribute('data-numeric'); }
      renderTable();
    });
  });
  filter.addEventListener('input', renderTable);

  // ---- Call graph: one function, its callers and callees ------------------
  var focus = document.getElementById('focus');
  function arcTable(title, arcs, side) {
    var table = el('table');
    var head = el('tr');
    ['calls', 'time', 'self', title].forEach(function (h) { head.appendChild(el('th', {}, h)); });
    table.appendChild(head);
    arcs.sort(function (a, b) { return (b.total - a.total) || (b.calls - a.calls); });
    arcs.forEach(function (a) {
      var tr = el('tr', { class: 'arc' });
      tr.appendChild(el('td', {}, count(a.calls)));
      tr.appendChild(el('td', {}, duration(a.total)));
      tr.appendChild(el('td', {}, duration(a.self)));
      var who = el('td');
      var id = side === 'caller' ? a.caller : a.callee;
      if (id === null) who.textContent = '<spontaneous> (called by the host)';
      else who.appendChild(fnLink(id));
      tr.appendChild(who);
      table.appendChild(tr);
    });
    if (!arcs.length) {
      var none = el('tr');
      none.appendChild(el('td', { colspan: '4' }, side === 'caller' ? 'no callers' : 'no instrumented callees'));
      table.appendChild(none);
    }
    return table;
  }
  function show(id) {
    var f = byId[id];
    if (!f) return;
    focus.replaceChildren();
    var h = el('h3', { id: 'focused', 'data-id': id }, f.name);
    focus.appendChild(h);
    focus.appendChild(el('p', {}, count(f.calls) + ' calls · self ' + duration(f.self) + ' · total ' +
      duration(f.total) + ' · ' + f.place + (f.open ? ' · still running when the profile was taken' : '') +
      (f.timeKind ? ' · time ' + f.timeKind : '')));
    focus.appendChild(el('h4', {}, 'Called by'));
    if (f.countedOnly && f.timeMark === '(sampled)') {
      focus.appendChild(el('p', {}, 'Counted only: its calls are exact, and its callers are not ' +
        'tracked; the callers below are those the engine\'s samples found it under, with the ' +
        'time the samples saw there.'));
    } else if (f.countedOnly) {
      focus.appendChild(el('p', {}, 'Counted only: its calls are exact, its time is in its ' +
        'callers\' self time, and its callers are not tracked.'));
    }
    if (f.async) {
      focus.appendChild(el('p', {}, 'Async: each call created a future; its time is CPU time, ' +
        'inside its polls, under the code that called it (gprof\'s report lists polls, ' +
        'completions, cancellations and latency).'));
    }
    focus.appendChild(arcTable('caller', (callersOf[id] || []).slice(), 'caller'));
    focus.appendChild(el('h4', {}, 'Calls'));
    focus.appendChild(arcTable('callee', (calleesOf[id] || []).slice(), 'callee'));
  }
  function route() {
    var match = /^#f=(\d+)$/.exec(location.hash);
    if (match) {
      show(Number(match[1]));
      document.getElementById('graph').scrollIntoView();
    }
  }
  window.addEventListener('hashchange', route);

  renderTable();
  var first = data.functions.slice().sort(function (a, b) { return b.self - a.self || b.calls - a.calls; })[0];
  if (location.hash.indexOf('#f=') === 0) route();
  else if (first) show(first.id);
  window.__wasmprofReport = { show: show, renderTable: renderTable, data: data };
})();
