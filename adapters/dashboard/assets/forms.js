// Formward form builder. The builder works without this file: every change is a form post
// that answers 303 to the builder again (Move up/Move down, one option per line, width links
// that reload the page). With it:
// - every change of the builder is saved without a page reload: the post is sent in the
//   background, the builder's content is replaced by the page the server answers (the same
//   page a reload shows, errors included), focus stays on the control that was used (or on the
//   first field in error) and the notice is announced;
// - questions and page breaks move by dragging their handle;
// - a condition's value picker follows the question it tests;
// - options are edited as a list;
// - the preview switches between phone and full width and is drawn again after each save.
(function () {
  'use strict';

  var main = document.getElementById('main');
  var announcer = document.createElement('div');
  announcer.className = 'visually-hidden';
  announcer.setAttribute('role', 'status');
  announcer.setAttribute('aria-live', 'polite');
  document.body.appendChild(announcer);
  function announce(text) {
    announcer.textContent = '';
    window.setTimeout(function () { announcer.textContent = text; }, 50);
  }

  // The preview: refreshPreview() draws the form's first page again, so a change saved without
  // a page reload shows at once. The width links switch between phone and full width without a
  // reload; the URL keeps the choice.
  window.refreshPreview = function () {
    var frame = document.getElementById('fb-preview');
    if (frame) frame.setAttribute('src', frame.getAttribute('src'));
  };
  function previewWidths(root) {
    var box = root.querySelector('#fb-preview-frame');
    var links = Array.prototype.slice.call(root.querySelectorAll('[data-preview-width]'));
    links.forEach(function (link) {
      link.addEventListener('click', function (e) {
        if (!box || e.ctrlKey || e.metaKey || e.shiftKey || e.altKey) return;
        e.preventDefault();
        phone(link.getAttribute('data-preview-width') === 'phone');
        if (window.history && history.replaceState) history.replaceState(null, '', link.getAttribute('href'));
      });
    });
  }
  function phone(on) {
    var box = document.getElementById('fb-preview-frame');
    if (!box) return;
    box.classList.toggle('fb-preview-phone', on);
    document.querySelectorAll('[data-preview-width]').forEach(function (l) {
      if ((l.getAttribute('data-preview-width') === 'phone') === on) l.setAttribute('aria-current', 'true');
      else l.removeAttribute('aria-current');
    });
  }

  // Saving without a reload. Only the builder's own posts are taken (the form's address and
  // below); one that lands on another page (a duplicated form, a deleted one) is followed.
  var busy = false;
  var builderPath = window.location.pathname;
  main.addEventListener('submit', function (e) {
    var form = e.target;
    if (!main.querySelector('.fb-tabs') || !window.fetch || !window.DOMParser || form.method.toLowerCase() !== 'post') return;
    var submitter = e.submitter || null;
    // A button may post elsewhere (formaction) and in another encoding (formenctype).
    // (Read from the attributes: a button's formAction property is the page's own URL when the
    // button has none.)
    var action = new URL((submitter && submitter.getAttribute('formaction')) || form.action, window.location.href);
    if (action.origin !== window.location.origin || action.pathname.indexOf(builderPath) !== 0 || form.hasAttribute('data-reload')) return;
    e.preventDefault();
    if (busy) return;
    busy = true;
    var focusID = (submitter && submitter.id) || (document.activeElement && document.activeElement.id) || '';
    var data = submitter ? new FormData(form, submitter) : new FormData(form);
    var multipart = ((submitter && submitter.getAttribute('formenctype')) || form.enctype || '').indexOf('multipart') === 0;
    var body = multipart ? data : new URLSearchParams(data);
    var wasPhone = !!document.querySelector('.fb-preview-phone');
    if (submitter) submitter.setAttribute('aria-busy', 'true');
    fetch(action.href, { method: 'POST', body: body, credentials: 'same-origin', redirect: 'follow', headers: { 'Accept': 'text/html' } })
      .then(function (res) {
        // A refused change answers the builder drawn again, at the post's own address; a saved
        // one answers 303 to the builder (or to another page, which is followed).
        var to = res.redirected ? new URL(res.url) : new URL(window.location.href);
        if (to.pathname !== builderPath) {
          window.location.assign(res.url);
          return null;
        }
        return res.text().then(function (html) { swap(html, res.status, focusID, wasPhone, to); });
      })
      .catch(function () {
        busy = false;
        form.submit(); // the network failed in the background: the plain post says what happened
      })
      .then(function () { busy = false; });
  });

  function swap(html, status, focusID, wasPhone, to) {
    var doc = new DOMParser().parseFromString(html, 'text/html');
    var next = doc.getElementById('main');
    if (!next) { window.location.reload(); return; }
    main.innerHTML = next.innerHTML;
    document.title = doc.title;
    if (window.history && history.replaceState) history.replaceState(null, '', to.pathname + to.search + window.location.hash);
    init(main);
    if (window.formwardCopyButtons) window.formwardCopyButtons(main);
    if (wasPhone) phone(true);
    var target = null;
    if (status >= 400) target = main.querySelector('[aria-invalid="true"]') || main.querySelector('#page-error');
    if (!target && focusID) {
      target = document.getElementById(focusID);
      if (target && target.disabled) {
        // A question moved to the top or the bottom: its other move button still works.
        var other = focusID.indexOf('up-') === 0 ? 'down-' + focusID.slice(3) : 'up-' + focusID.slice(5);
        target = document.getElementById(other);
      }
    }
    if (target) {
      var details = target.closest('details');
      if (details) details.open = true;
      if (!target.hasAttribute('tabindex') && !/^(A|BUTTON|INPUT|SELECT|TEXTAREA)$/.test(target.tagName)) target.setAttribute('tabindex', '-1');
      target.focus();
    }
    var notice = main.querySelector('.alert');
    if (notice) announce(notice.textContent.trim());
    // Tests (and anything else that waits for a save) watch these two attributes.
    var root = document.documentElement;
    root.setAttribute('data-fb-status', String(status));
    root.setAttribute('data-fb-saved', String(Number(root.getAttribute('data-fb-saved') || '0') + 1));
  }

  // Drag and drop of questions and page breaks by their handle; the new order (page breaks as
  // "|") is saved like any other change.
  function dragging(root) {
    var list = root.querySelector('#fb-fields');
    var orderForm = root.querySelector('#fb-order-form');
    if (!list || !orderForm) return;
    var dragged = null;
    list.querySelectorAll(':scope > .fb-field, :scope > .fb-break').forEach(function (item) {
      var handle = item.querySelector('.fb-handle');
      if (!handle) return;
      // Only the handle is draggable, so text in the edit form stays selectable; the whole
      // item is what moves.
      handle.hidden = false;
      handle.draggable = true;
      handle.addEventListener('dragstart', function (e) {
        dragged = item;
        item.classList.add('fb-dragging');
        e.dataTransfer.effectAllowed = 'move';
        e.dataTransfer.setData('text/plain', item.id);
        if (e.dataTransfer.setDragImage) e.dataTransfer.setDragImage(item, 16, 16);
      });
      handle.addEventListener('dragend', function () {
        item.classList.remove('fb-dragging');
        list.querySelectorAll('.fb-over').forEach(function (el) { el.classList.remove('fb-over'); });
        dragged = null;
      });
      item.addEventListener('dragover', function (e) {
        if (!dragged || dragged === item) return;
        e.preventDefault();
        e.dataTransfer.dropEffect = 'move';
        item.classList.add('fb-over');
      });
      item.addEventListener('dragleave', function () { item.classList.remove('fb-over'); });
      item.addEventListener('drop', function (e) {
        if (!dragged || dragged === item) return;
        e.preventDefault();
        item.classList.remove('fb-over');
        var rect = item.getBoundingClientRect();
        var after = e.clientY > rect.top + rect.height / 2;
        list.insertBefore(dragged, after ? item.nextSibling : item);
        var order = [];
        list.querySelectorAll(':scope > .fb-field, :scope > .fb-break').forEach(function (el) {
          order.push(el.classList.contains('fb-break') ? '|' : el.getAttribute('data-id'));
        });
        orderForm.querySelector('#fb-order').value = order.join(',');
        announce('Saving the new order…');
        if (orderForm.requestSubmit) orderForm.requestSubmit(); else orderForm.submit();
      });
    });
  }

  // Display logic: the conditions show only when "Show it only when…" is chosen, and a
  // condition's value picker offers the options of the question it tests (free text for others
  // and for "is more than" / "is less than").
  function logicPickers(root) {
    root.querySelectorAll('.fb-logic').forEach(function (box) {
      var conds = box.querySelector('.fb-conds');
      var radios = box.querySelectorAll('input[name="logic"]');
      function showConds() {
        var on = box.querySelector('input[name="logic"][value="when"]');
        if (conds && on) conds.hidden = !on.checked;
      }
      radios.forEach(function (r) { r.addEventListener('change', showConds); });
      showConds();
      box.querySelectorAll('select[data-value-picker]').forEach(function (fieldPicker) {
        var row = fieldPicker.closest('.fb-cond');
        var op = row.querySelector('select[name^="co_"]');
        function follow() {
          var old = document.getElementById(fieldPicker.getAttribute('data-value-picker'));
          if (!old) return;
          var chosen = fieldPicker.options[fieldPicker.selectedIndex];
          var values = null;
          try { values = JSON.parse((chosen && chosen.getAttribute('data-values')) || 'null'); } catch (err) { values = null; }
          var free = !values || !values.length || (op && (op.value === 'greater_than' || op.value === 'less_than'));
          var wantSelect = !free;
          if ((old.tagName === 'SELECT') === wantSelect && !wantSelect) return;
          var current = old.value;
          var ctl;
          if (wantSelect) {
            ctl = document.createElement('select');
            values.forEach(function (v) {
              var o = document.createElement('option');
              o.value = v[0];
              o.textContent = v[1];
              if (v[0] === current) o.selected = true;
              ctl.appendChild(o);
            });
          } else {
            ctl = document.createElement('input');
            ctl.type = 'text';
            ctl.value = old.tagName === 'SELECT' ? '' : current;
          }
          ['id', 'name', 'aria-describedby', 'aria-invalid'].forEach(function (a) {
            if (old.hasAttribute(a)) ctl.setAttribute(a, old.getAttribute(a));
          });
          old.parentNode.replaceChild(ctl, old);
        }
        fieldPicker.addEventListener('change', follow);
        if (op) op.addEventListener('change', follow);
      });
    });
  }

  // Options: a list of inputs with add, move and remove; the textarea keeps the value posted.
  function optionEditors(root) {
  root.querySelectorAll('.fb-options').forEach(function (box) {
    var area = box.querySelector('textarea');
    if (!area) return;
    var label = box.querySelector('label').textContent;
    var ul = document.createElement('ul');
    ul.className = 'fb-opt-list';
    var add = button('Add option', function () { row(''); sync(); ul.lastChild.querySelector('input').focus(); });
    area.hidden = true;
    var hint = box.querySelector('.hint');
    if (hint) hint.textContent = hint.textContent.replace('One option per line', 'Options in order');
    box.querySelector('label').removeAttribute('for');
    box.querySelector('label').id = area.id + '-label';
    box.insertBefore(ul, area);
    box.insertBefore(add, area);
    area.value.split('\n').forEach(function (v) { if (v.trim() !== '') row(v.trim()); });

    function button(text, fn) {
      var b = document.createElement('button');
      b.type = 'button';
      b.className = 'btn btn-sm';
      b.textContent = text;
      b.addEventListener('click', fn);
      return b;
    }
    function row(value) {
      var li = document.createElement('li');
      var input = document.createElement('input');
      input.type = 'text';
      input.value = value;
      input.setAttribute('aria-label', label + ' ' + (ul.children.length + 1));
      input.addEventListener('input', sync);
      li.appendChild(input);
      li.appendChild(button('Up', function () { if (li.previousSibling) { ul.insertBefore(li, li.previousSibling); sync(); input.focus(); } }));
      li.appendChild(button('Down', function () { if (li.nextSibling) { ul.insertBefore(li.nextSibling, li); sync(); input.focus(); } }));
      li.appendChild(button('Remove', function () {
        var next = li.nextSibling || li.previousSibling;
        ul.removeChild(li);
        sync();
        (next ? next.querySelector('input') : add).focus();
      }));
      ul.appendChild(li);
    }
    function sync() {
      var values = [];
      Array.prototype.forEach.call(ul.children, function (li, i) {
        var input = li.querySelector('input');
        input.setAttribute('aria-label', label + ' ' + (i + 1));
        li.querySelectorAll('button').forEach(function (b) {
          b.setAttribute('aria-label', b.textContent + ': ' + label.toLowerCase() + ' ' + (i + 1));
        });
        values.push(input.value);
      });
      area.value = values.join('\n');
    }
    sync();
  });
  }

  // The theme's accent: a colour picker beside the text input, which stays what is posted
  // (without this file the text input alone does the job).
  function accentPicker(root) {
    var accent = root.querySelector('#s-accent');
    var picker = root.querySelector('#s-accent-picker');
    if (!accent || !picker) return;
    var fromText = function () {
      var v = accent.value.trim().toLowerCase();
      if (/^#[0-9a-f]{3}$/.test(v)) v = '#' + v[1] + v[1] + v[2] + v[2] + v[3] + v[3];
      picker.value = /^#[0-9a-f]{6}$/.test(v) ? v : '#1d4ed8';
    };
    fromText();
    picker.hidden = false;
    accent.addEventListener('input', fromText);
    picker.addEventListener('input', function () { accent.value = picker.value; });
  }

  function init(root) {
    previewWidths(root);
    dragging(root);
    logicPickers(root);
    optionEditors(root);
    accentPicker(root);
  }
  init(main);
})();
