// Formward form builder: drag and drop ordering and a list editor for options. The builder
// works without this file (Move up/Move down buttons, one option per line).
(function () {
  'use strict';

  var list = document.getElementById('fb-fields');
  var orderForm = document.getElementById('fb-order-form');
  if (list && orderForm) {
    var dragged = null;
    list.querySelectorAll('.fb-field').forEach(function (item) {
      var handle = item.querySelector('.fb-handle');
      if (!handle) return;
      // Only the handle is draggable, so text in the edit form stays selectable; the whole
      // field is what moves.
      handle.hidden = false;
      handle.draggable = true;
      handle.addEventListener('dragstart', function (e) {
        dragged = item;
        item.classList.add('fb-dragging');
        e.dataTransfer.effectAllowed = 'move';
        e.dataTransfer.setData('text/plain', item.getAttribute('data-id'));
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
        var ids = [];
        list.querySelectorAll('.fb-field').forEach(function (el) { ids.push(el.getAttribute('data-id')); });
        document.getElementById('fb-order').value = ids.join(',');
        var live = document.getElementById('fb-live');
        if (live) live.textContent = 'Saving the new order…';
        orderForm.submit();
      });
    });
  }

  // Options: a list of inputs with add, move and remove; the textarea keeps the value posted.
  document.querySelectorAll('.fb-options').forEach(function (box) {
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
  // The theme's accent: a colour picker beside the text input, which stays what is posted
  // (without this file the text input alone does the job).
  var accent = document.getElementById('s-accent');
  var picker = document.getElementById('s-accent-picker');
  if (accent && picker) {
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
})();
