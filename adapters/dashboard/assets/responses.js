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
