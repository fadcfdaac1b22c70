// notifyd console: progressive enhancement only; every page works without it.
// Forms with data-confirm ask before submitting (a cancel, for one).
document.addEventListener("submit", function (ev) {
  var f = ev.target;
  var msg = f.getAttribute && f.getAttribute("data-confirm");
  if (msg && !window.confirm(msg)) {
    ev.preventDefault();
  }
});

// Routes: drag a row within its channel's table to reorder; the drop
// submits the routes form in the new order (saved at once, like the
// arrow buttons, which work without JavaScript).
(function () {
  var form = document.getElementById("routes-form");
  if (!form) {
    return;
  }
  var dragged = null;
  form.addEventListener("dragstart", function (ev) {
    var row = ev.target.closest && ev.target.closest("tr.route");
    if (!row) {
      return;
    }
    dragged = row;
    row.classList.add("dragging");
    ev.dataTransfer.effectAllowed = "move";
    ev.dataTransfer.setData("text/plain", row.getAttribute("data-provider-id"));
  });
  form.addEventListener("dragend", function () {
    if (dragged) {
      dragged.classList.remove("dragging");
    }
    dragged = null;
  });
  form.addEventListener("dragover", function (ev) {
    var row = ev.target.closest && ev.target.closest("tr.route");
    if (dragged && row && row.parentNode === dragged.parentNode) {
      ev.preventDefault();
    }
  });
  form.addEventListener("drop", function (ev) {
    var row = ev.target.closest && ev.target.closest("tr.route");
    if (!dragged || !row || row === dragged || row.parentNode !== dragged.parentNode) {
      return;
    }
    ev.preventDefault();
    var rows = Array.prototype.slice.call(row.parentNode.children);
    if (rows.indexOf(dragged) < rows.indexOf(row)) {
      row.after(dragged);
    } else {
      row.before(dragged);
    }
    // The hidden "route" inputs now follow the new order: save as shown.
    form.submit();
  });
})();

// A secret shown once (API key create or rotate) is the answer of a POST:
// the address becomes the list's again, so a reload reads the list (the
// secret is gone) instead of posting the form a second time.
(function () {
  var el = document.querySelector("[data-replace-url]");
  if (el && window.history && window.history.replaceState) {
    window.history.replaceState(null, "", el.getAttribute("data-replace-url"));
  }
})();

// Copy buttons: data-copy names the element whose text is copied.
document.addEventListener("click", function (ev) {
  var b = ev.target.closest && ev.target.closest("button[data-copy]");
  if (!b) {
    return;
  }
  var el = document.getElementById(b.getAttribute("data-copy"));
  if (!el || !navigator.clipboard) {
    return;
  }
  navigator.clipboard.writeText(el.textContent).then(function () {
    b.textContent = "Copied";
  });
});
