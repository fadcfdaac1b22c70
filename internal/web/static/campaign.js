// notifyd console, campaign page: polls the campaign's progress (a JSON
// route of the console) while it is not finished and updates the figures;
// when the status changes the page reloads so its actions match.
(function () {
  var box = document.getElementById("campaign-progress");
  var url = box && box.getAttribute("data-progress-url");
  if (!url) {
    return;
  }
  var shown = box.getAttribute("data-status");
  function set(id, v) {
    var el = document.getElementById(id);
    if (el) {
      el.textContent = String(v);
    }
  }
  function tick() {
    fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } })
      .then(function (r) {
        if (!r.ok) {
          throw new Error("progress " + r.status);
        }
        return r.json();
      })
      .then(function (p) {
        var s = p.deliveryStats || {};
        ["queued", "processing", "sent", "failed", "canceled"].forEach(function (k) {
          set("stat-" + k, s[k] || 0);
        });
        set("total-recipients", p.totalRecipients);
        set("progress-total", p.totalRecipients);
        set("done", s.done || 0);
        set("audience-size", p.audienceSize);
        set("estimated-finish", p.estimatedFinish);
        var bar = document.getElementById("progress-bar");
        if (bar) {
          bar.max = Math.max(1, p.totalRecipients);
          bar.value = s.done || 0;
        }
        if (p.status !== shown) {
          set("status", p.status);
          window.location.reload();
          return;
        }
        setTimeout(tick, 1000);
      })
      .catch(function () {
        setTimeout(tick, 5000);
      });
  }
  setTimeout(tick, 1000);
})();
