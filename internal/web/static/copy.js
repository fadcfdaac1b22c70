// notifyd console: a button with data-copy="ID" copies the value of the
// element ID (a secret shown once) to the clipboard.
document.addEventListener("click", function (ev) {
  var b = ev.target.closest && ev.target.closest("button[data-copy]");
  if (!b) {
    return;
  }
  var el = document.getElementById(b.getAttribute("data-copy"));
  if (!el) {
    return;
  }
  el.select();
  var done = function () { b.textContent = "Copied"; };
  if (navigator.clipboard && navigator.clipboard.writeText) {
    navigator.clipboard.writeText(el.value).then(done, function () {
      document.execCommand("copy");
      done();
    });
  } else {
    document.execCommand("copy");
    done();
  }
});
