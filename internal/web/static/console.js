// notifyd console: progressive enhancement only; every page works without it.
// Forms with data-confirm ask before submitting (a cancel, for one).
document.addEventListener("submit", function (ev) {
  var f = ev.target;
  var msg = f.getAttribute && f.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) {
    ev.preventDefault();
  }
});
