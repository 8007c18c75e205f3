// wasmprof's HTML report: the flat profile, the call graph and the run's
// metadata, built from the JSON in the page. Nothing is fetched.
(function () {
  'use strict';
  var data = JSON.parse(document.getElementById('data').textContent);
  var byId = {};
  data.functions.forEach(function (f) {
    f.selfShare = data.totalNanos > 0 ? (100 * f.self) / data.totalNanos : 0;
    f.place = placeOf(f);
    byId[f.id] = f;
  });
  var callersOf = {}, calleesOf = {};
  data.arcs.forEach(function (a) {
    (callersOf[a.callee] = callersOf[a.callee] || []).push(a);
    if (a.caller !== null) (calleesOf[a.caller] = calleesOf[a.caller] || []).push(a);
  });

  function duration(nanos) {
    if (!data.timed) return '-';
    if (!nanos) return '0';
    var units = [[1e9, 's'], [1e6, 'ms'], [1e3, 'µs'], [1, 'ns']];
    for (var i = 0; i < units.length; i++) {
      if (Math.abs(nanos) >= units[i][0] || i === units.length - 1) {
        var v = nanos / units[i][0];
        return (v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)) + ' ' + units[i][1];
      }
    }
  }
  // Plain digits, as the summary and the text reports print them.
  function count(n) { return data.counted && n !== null ? String(n) : '-'; }
  // "1 call", "3 calls"; nothing when calls were not counted.
  function calls(n) {
    if (!data.counted || n === null) return '';
    return n + (n === 1 ? ' call' : ' calls');
  }
  // A place in the source; nothing when it is unknown.
  function placeOf(f) {
    if (!f.file) return '';
    return f.file + (f.line ? ':' + f.line : '') + (f.column ? ':' + f.column : '');
  }
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
    ['exit status', m.exitCode === null || m.exitCode === undefined ? null : String(m.exitCode)],
    ['wall time', duration(m.wallNanos)],
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

  // Places sort by file, then by line as a number (main.rs:22 before
  // main.rs:107); numbers as numbers; text as text.
  function compare(a, b, key) {
    if (key === 'place') {
      return (a.file || '').localeCompare(b.file || '') || (a.line || 0) - (b.line || 0);
    }
    var x = a[key], y = b[key];
    if (typeof x === 'string' || typeof y === 'string') return String(x).localeCompare(String(y));
    return (x || 0) - (y || 0);
  }

  function renderTable() {
    var keep = matcher(filter.value.trim());
    var rows = data.functions.filter(keep);
    rows.sort(function (a, b) {
      var c = compare(a, b, sortKey);
      if (descending) c = -c;
      // Ties in name order, whichever way the column sorts.
      return c || a.name.localeCompare(b.name);
    });
    var fragment = document.createDocumentFragment();
    rows.slice(0, MAX_ROWS).forEach(function (f) {
      var tr = el('tr', f.open ? { class: 'open' } : {});
      tr.appendChild(el('td', {}, duration(f.self)));
      tr.appendChild(el('td', {}, data.timed ? f.selfShare.toFixed(1) + '%' : '-'));
      tr.appendChild(el('td', {}, duration(f.total)));
      tr.appendChild(el('td', {}, data.sampled ? String(f.samples || 0) : count(f.calls)));
      var name = el('td', { class: 'name' });
      name.appendChild(fnLink(f.id));
      if (f.cycle) name.appendChild(document.createTextNode(' <cycle ' + f.cycle + '>'));
      if (f.async) name.appendChild(document.createTextNode(' (async)'));
      if (f.timeMark) name.appendChild(el('span', { class: 'time-mark', title: 'time ' + f.timeKind }, ' ' + f.timeMark));
      tr.appendChild(name);
      tr.appendChild(el('td', { class: 'where', title: f.place }, f.place));
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
    // Both tables of a function alike: fixed columns, figures right.
    // An engine's profile counts no calls: no column of dashes.
    var table = el('table', { class: 'arcs' });
    var names = data.counted ? ['calls', 'time', 'self', 'name'] : ['time', 'self', 'name'];
    var columns = el('colgroup');
    names.forEach(function (c) { columns.appendChild(el('col', { class: c })); });
    table.appendChild(columns);
    var head = el('tr');
    names.forEach(function (c) {
      head.appendChild(el('th', c === 'name' ? { class: 'name' } : {}, c === 'name' ? title : c));
    });
    table.appendChild(head);
    arcs.sort(function (a, b) { return (b.total - a.total) || (b.calls - a.calls); });
    arcs.forEach(function (a) {
      var tr = el('tr', { class: 'arc' });
      if (data.counted) tr.appendChild(el('td', {}, count(a.calls)));
      tr.appendChild(el('td', {}, duration(a.total)));
      tr.appendChild(el('td', {}, duration(a.self)));
      var who = el('td', { class: 'name' });
      var id = side === 'caller' ? a.caller : a.callee;
      if (id === null) who.textContent = '<spontaneous> (called by the host)';
      else who.appendChild(fnLink(id));
      tr.appendChild(who);
      table.appendChild(tr);
    });
    if (!arcs.length) {
      var none = el('tr');
      none.appendChild(el('td', { colspan: String(names.length), class: 'name' }, side === 'caller' ? 'no callers' : 'no instrumented callees'));
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
    var facts = [calls(f.calls)];
    if (data.sampled) facts.push((f.samples || 0) + ((f.samples || 0) === 1 ? ' sample' : ' samples'));
    if (data.timed) facts.push('self ' + duration(f.self), 'total ' + duration(f.total));
    facts.push(f.place);
    if (f.open) facts.push('still running when the profile was taken');
    if (f.timeKind) facts.push('time ' + f.timeKind);
    focus.appendChild(el('p', {}, facts.filter(Boolean).join(' · ')));
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
  window.__wasmprofReport = { show: show, renderTable: renderTable, compare: compare, data: data };
})();
