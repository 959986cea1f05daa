// Formward dashboard: small progressive enhancements. Every page works without this file.
(function () {
  'use strict';

  // Copy buttons: <button data-copy="id-of-element">. Hidden until the script runs, since
  // copying needs it; the value stays selectable by hand either way.
  // copyButtons binds the copy buttons under root; the builder calls it again on the content
  // it draws after a save without a reload.
  function copyButtons(root) {
  root.querySelectorAll('[data-copy]').forEach(function (btn) {
    btn.hidden = false;
    btn.addEventListener('click', function () {
      var el = document.getElementById(btn.getAttribute('data-copy'));
      if (!el) return;
      var text = el.textContent.trim();
      var done = function () {
        var status = document.getElementById(btn.getAttribute('data-copy') + '-status');
        if (status) status.textContent = 'Copied to the clipboard.';
        btn.textContent = 'Copied';
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () { select(el); });
      } else {
        select(el);
        try { if (document.execCommand('copy')) done(); } catch (e) { /* selection stays for manual copy */ }
      }
    });
  });
  }
  copyButtons(document);
  window.formwardCopyButtons = copyButtons;

  function select(el) {
    var range = document.createRange();
    range.selectNodeContents(el);
    var sel = window.getSelection();
    sel.removeAllRanges();
    sel.addRange(range);
  }

  // The user menu closes with Escape and returns focus to its toggle.
  document.querySelectorAll('details.user-menu').forEach(function (menu) {
    menu.addEventListener('keydown', function (e) {
      if (e.key === 'Escape' && menu.open) {
        menu.open = false;
        menu.querySelector('summary').focus();
      }
    });
    document.addEventListener('click', function (e) {
      if (menu.open && !menu.contains(e.target)) menu.open = false;
    });
  });

  // A time zone select the person has not chosen yet preselects the device's zone (saving
  // keeps it on the profile); without the script the workspace's zone stays selected.
  document.querySelectorAll('select[data-detect-zone]').forEach(function (sel) {
    var zone;
    try { zone = Intl.DateTimeFormat().resolvedOptions().timeZone; } catch (e) { return; }
    if (!zone || sel.getAttribute('aria-invalid') === 'true') return;
    var option = Array.prototype.find.call(sel.options, function (o) { return o.value === zone; });
    if (!option) {
      option = new Option(zone.replace(/_/g, ' '), zone);
      sel.add(option);
    }
    option.selected = true;
    var note = sel.parentNode.querySelector('[data-zone-detected]');
    if (note) note.hidden = false;
  });

  // Focus the first field with an error, or the field marked autofocus by the server.
  var invalid = document.querySelector('[aria-invalid="true"]');
  if (invalid) invalid.focus();
})();
