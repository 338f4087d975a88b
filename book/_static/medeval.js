// A link to a row or anchor inside a collapsed block (a <details>) opens the block first, so that the reader lands
// on what the link names: the Key findings link to rows of the Paper-vs-us table, some of which are collapsed.
(function () {
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) { return; }
    for (var d = target.closest("details"); d; d = d.parentElement && d.parentElement.closest("details")) {
      d.open = true;
    }
    target.scrollIntoView();
  }
  window.addEventListener("hashchange", openTarget);
  document.addEventListener("DOMContentLoaded", openTarget);
})();
