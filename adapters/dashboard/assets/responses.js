// Formward dashboard: exports with a progress bar. Without this file the export links are plain
// downloads; with it, the file is fetched as a stream, the bar follows the rows received
// against the form's response count, and the page stays usable meanwhile.
(function () {
  'use strict';
  var box = document.querySelector('.export-progress');
  if (!box || !window.fetch || !window.ReadableStream || !window.URL || !URL.createObjectURL) return;
  var bar = box.querySelector('progress');
  var status = box.querySelector('[role=status]');
  var cancel = box.querySelector('[data-export-cancel]');
  var running = null;

  function fileName(resp) {
    var cd = resp.headers.get('Content-Disposition') || '';
    var star = /filename\*=UTF-8''([^;]+)/i.exec(cd);
    if (star) { try { return decodeURIComponent(star[1]); } catch (e) { /* fall back */ } }
    var plain = /filename="([^"]*)"/i.exec(cd);
    return plain ? plain[1] : 'export';
  }

  function kb(n) { return n < 1048576 ? Math.round(n / 1024) + ' KB' : (n / 1048576).toFixed(1) + ' MB'; }

  cancel.addEventListener('click', function () { if (running) running.abort(); });

  document.querySelectorAll('a[data-export]').forEach(function (a) {
    a.addEventListener('click', function (e) {
      if (e.ctrlKey || e.metaKey || e.shiftKey || e.altKey || running) return;
      e.preventDefault();
      var expected = parseInt(a.getAttribute('data-expected-rows'), 10) || 0;
      var lines = /format=(csv|ndjson)/.test(a.href);
      running = new AbortController();
      box.hidden = false;
      cancel.hidden = false;
      bar.removeAttribute('value');
      status.textContent = 'Export started. You can keep using this page.';
      var received = 0, rows = -1, chunks = [];
      fetch(a.href, { credentials: 'same-origin', signal: running.signal }).then(function (resp) {
        if (!resp.ok || !resp.body) throw new Error('The export could not start (' + resp.status + ').');
        var name = fileName(resp), type = resp.headers.get('Content-Type') || 'application/octet-stream';
        var reader = resp.body.getReader();
        // A CSV file starts with its header row; an NDJSON file has one line per response.
        rows = /format=ndjson/.test(a.href) ? 0 : -1;
        function pump() {
          return reader.read().then(function (r) {
            if (r.done) return new Blob(chunks, { type: type });
            chunks.push(r.value);
            received += r.value.length;
            if (lines) {
              for (var i = 0; i < r.value.length; i++) if (r.value[i] === 10) rows++;
            }
            if (lines && expected > 0) {
              bar.max = expected;
              bar.value = Math.min(Math.max(rows, 0), expected);
              status.textContent = 'About ' + Math.min(Math.max(rows, 0), expected) + ' of ' + expected + ' responses (' + kb(received) + ').';
            } else {
              status.textContent = kb(received) + ' received.';
            }
            return pump();
          });
        }
        return pump().then(function (blob) {
          var url = URL.createObjectURL(blob);
          var save = document.createElement('a');
          save.href = url;
          save.download = name;
          document.body.appendChild(save);
          save.click();
          save.remove();
          setTimeout(function () { URL.revokeObjectURL(url); }, 60000);
          bar.max = 1;
          bar.value = 1;
          status.textContent = 'Export finished: ' + name + ' (' + kb(received) + ').';
        });
      }).catch(function (err) {
        bar.value = 0;
        status.textContent = err.name === 'AbortError' ? 'Export cancelled.' : (err.message || 'The export failed. Try again.');
      }).then(function () { running = null; cancel.hidden = true; });
    });
  });
})();

// Responses table: "select all on this page", a count of the chosen rows, and the Columns
// panel: its up/down buttons move a column at once, and Save columns stores the choice and
// redraws the table in place (without this file each button saves and reloads the page).
(function () {
  'use strict';
  function bindSelection(root) {
    var all = root.querySelector('[data-select-all]');
    var boxes = Array.prototype.slice.call(root.querySelectorAll('table.responses tbody input[name=id]'));
    var count = root.querySelector('[data-selected-count]');
    function update() {
      var n = boxes.filter(function (b) { return b.checked; }).length;
      if (all) {
        all.checked = n > 0 && n === boxes.length;
        all.indeterminate = n > 0 && n < boxes.length;
      }
      if (count) count.textContent = n ? n + ' selected' : '';
    }
    if (all && boxes.length) {
      all.hidden = false;
      all.addEventListener('change', function () {
        boxes.forEach(function (b) { b.checked = all.checked; });
        update();
      });
    }
    boxes.forEach(function (b) { b.addEventListener('change', update); });
    update();
  }
  bindSelection(document);

  var form = document.querySelector('form[data-columns]');
  if (!form) return;
  var list = form.querySelector('.column-list');
  var status = form.querySelector('[data-columns-status]');
  function refresh() {
    var items = list.querySelectorAll('[data-column]');
    items.forEach(function (li, i) {
      li.querySelector('[data-move=up]').disabled = i === 0;
      li.querySelector('[data-move=down]').disabled = i === items.length - 1;
    });
  }
  list.addEventListener('click', function (e) {
    var btn = e.target.closest('[data-move]');
    if (!btn) return;
    e.preventDefault();
    var li = btn.closest('[data-column]');
    var up = btn.getAttribute('data-move') === 'up';
    var other = up ? li.previousElementSibling : li.nextElementSibling;
    if (!other) return;
    if (up) list.insertBefore(li, other); else list.insertBefore(other, li);
    refresh();
    list.querySelectorAll('.moved').forEach(function (x) { x.classList.remove('moved'); });
    li.classList.add('moved');
    var label = li.querySelector('label').textContent.trim();
    if (status) status.textContent = label + ' moved ' + (up ? 'up' : 'down') + '. Save columns to keep the order.';
    var again = li.querySelector('[data-move=' + (up ? 'up' : 'down') + ']');
    (again.disabled ? li.querySelector('[data-move=' + (up ? 'down' : 'up') + ']') : again).focus();
  });

  // Save columns: post the form as it is, and take the table from the page the post leads to.
  if (!window.fetch || !window.DOMParser || !window.FormData || !window.URLSearchParams) return;
  var saving = false;
  form.addEventListener('submit', function (e) {
    var by = e.submitter;
    if (saving || (by && by.name)) return; // Reset (and a move without this script) reload the page
    e.preventDefault();
    saving = true;
    if (status) status.textContent = 'Saving…';
    fetch(form.action, { method: 'POST', body: new URLSearchParams(new FormData(form)), credentials: 'same-origin' }).then(function (resp) {
      if (!resp.ok) throw new Error('The columns could not be saved (' + resp.status + '). Try again.');
      return resp.text();
    }).then(function (html) {
      var next = new DOMParser().parseFromString(html, 'text/html');
      var fresh = next.querySelector('.table-card');
      var card = document.querySelector('.table-card');
      if (!fresh || !card) throw new Error('The columns were saved; reload the page to see them.');
      card.replaceWith(fresh);
      bindSelection(fresh);
      var summary = next.querySelector('#columns summary');
      if (summary) form.closest('details').querySelector('summary').innerHTML = summary.innerHTML;
      if (!form.querySelector('[name=reset]')) {
        var reset = next.querySelector('form[data-columns] [name=reset]');
        if (reset) form.querySelector('[type=submit]:not([name])').after(' ', reset);
      }
      list.querySelectorAll('.moved').forEach(function (x) { x.classList.remove('moved'); });
      if (status) status.textContent = 'Columns saved.';
    }).catch(function (err) {
      if (status) status.textContent = err.message || 'The columns could not be saved. Try again.';
    }).then(function () { saving = false; });
  });
})();
