// <notifyd-inbox>: the in-app inbox of notifyd (issue 33) as a web
// component without dependencies: a bell with the unread badge, a panel
// listing the messages (50 at a time, "Show more" for older ones), mark
// read, mark all read, archive, delete, and live updates from the inbox
// stream (Server-Sent Events).
//
//   <script src="https://notifyd.example.com/static/notifyd-inbox.js"></script>
//   <notifyd-inbox base-url="https://notifyd.example.com" token="v1...."></notifyd-inbox>
//
// token is a recipient token your backend minted for the signed-in
// person. Set the element's tokenProvider property to an async function
// answering a fresh token and the element renews an expired one itself.
// Theme it with CSS variables on the element (or any ancestor):
// --notifyd-accent, --notifyd-bg, --notifyd-fg, --notifyd-muted,
// --notifyd-border, --notifyd-unread-bg, --notifyd-badge-bg,
// --notifyd-badge-fg, --notifyd-font, --notifyd-radius,
// --notifyd-panel-width; parts: bell, badge, panel, item.
(() => {
  "use strict";
  if (customElements.get("notifyd-inbox")) return;
  const scriptOrigin = (() => {
    try { return new URL(document.currentScript.src).origin; } catch (e) { return location.origin; }
  })();

  const css = `
:host { position: relative; display: inline-block; font-family: var(--notifyd-font, system-ui, sans-serif);
  color: var(--notifyd-fg, #1f2328); }
.bell { position: relative; background: none; border: 0; cursor: pointer; padding: 6px; color: inherit; }
.bell svg { width: 24px; height: 24px; display: block; }
.badge { position: absolute; top: 0; right: 0; min-width: 18px; height: 18px; padding: 0 5px; box-sizing: border-box;
  border-radius: 9px; font-size: 11px; line-height: 18px; text-align: center;
  background: var(--notifyd-badge-bg, #d1242f); color: var(--notifyd-badge-fg, #fff); }
.badge[hidden] { display: none; }
.panel { position: absolute; right: 0; top: 100%; z-index: 1000; width: var(--notifyd-panel-width, 360px);
  max-height: 480px; overflow: auto; background: var(--notifyd-bg, #fff);
  border: 1px solid var(--notifyd-border, #d0d7de); border-radius: var(--notifyd-radius, 8px);
  box-shadow: 0 8px 24px rgba(0, 0, 0, .15); }
.panel[hidden] { display: none; }
header { display: flex; justify-content: space-between; align-items: center; padding: 10px 12px;
  border-bottom: 1px solid var(--notifyd-border, #d0d7de); font-weight: 600; }
button.link { background: none; border: 0; padding: 0; cursor: pointer; font: inherit; font-size: 12px;
  color: var(--notifyd-accent, #0969da); }
ul { list-style: none; margin: 0; padding: 0; }
li { padding: 10px 12px; border-bottom: 1px solid var(--notifyd-border, #d0d7de); }
li.unread { background: var(--notifyd-unread-bg, #f0f6ff); }
li .title { font-weight: 600; }
li .body { margin: 2px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
li .meta { display: flex; gap: 12px; align-items: center; font-size: 12px; color: var(--notifyd-muted, #656d76); }
li.clickable .title, li.clickable .body { cursor: pointer; }
.more { display: block; width: 100%; padding: 10px 12px; text-align: center; }
.more[hidden] { display: none; }
.empty { padding: 24px 12px; text-align: center; color: var(--notifyd-muted, #656d76); }
`;

  const bellSVG = '<svg viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" aria-hidden="true">' +
    '<path d="M6 8a6 6 0 1 1 12 0c0 7 3 9 3 9H3s3-2 3-9"/><path d="M10.3 21a1.94 1.94 0 0 0 3.4 0"/></svg>';

  class NotifydInbox extends HTMLElement {
    static get observedAttributes() { return ["token", "base-url"]; }

    constructor() {
      super();
      this.tokenProvider = null;
      this._messages = [];
      this._counts = { unread: 0, unseen: 0 };
      this._lastEventId = "";
      const root = this.attachShadow({ mode: "open" });
      root.innerHTML = `<style>${css}</style>
<button class="bell" part="bell" aria-label="Notifications" aria-expanded="false">${bellSVG}<span class="badge" part="badge" hidden></span></button>
<div class="panel" part="panel" hidden role="dialog" aria-label="Notifications">
  <header><span>Notifications</span><button class="link mark-all" type="button">Mark all read</button></header>
  <ul class="list"></ul><button class="link more" type="button" hidden>Show more</button><div class="empty" hidden>No notifications</div>
</div>`;
      this._bell = root.querySelector(".bell");
      this._badge = root.querySelector(".badge");
      this._panel = root.querySelector(".panel");
      this._list = root.querySelector(".list");
      this._empty = root.querySelector(".empty");
      this._more = root.querySelector(".more");
      this._cursor = null;
      this._more.addEventListener("click", () => this._loadMore());
      this._bell.addEventListener("click", () => this._toggle());
      root.querySelector(".mark-all").addEventListener("click", () => this._post("/v1/inbox/read-all"));
    }

    get baseURL() { return (this.getAttribute("base-url") || scriptOrigin).replace(/\/+$/, ""); }
    get token() { return this.getAttribute("token") || ""; }

    connectedCallback() { this._start(); }
    disconnectedCallback() { this._stop(); }
    attributeChangedCallback(name, old, value) {
      if (old !== value && this.isConnected) this._start();
    }

    _stop() {
      if (this._es) { this._es.close(); this._es = null; }
    }

    _start() {
      this._stop();
      if (!this.token) return;
      let url = `${this.baseURL}/v1/inbox/stream?token=${encodeURIComponent(this.token)}`;
      if (this._lastEventId) url += `&lastEventId=${encodeURIComponent(this._lastEventId)}`;
      const es = new EventSource(url);
      this._es = es;
      const on = (type, fn) => es.addEventListener(type, (e) => {
        if (e.lastEventId) this._lastEventId = e.lastEventId;
        fn(e.data ? JSON.parse(e.data) : {});
      });
      on("ready", (c) => { this._setCounts(c); this._load(); });
      on("reset", () => {});
      on("counts", (c) => this._setCounts(c));
      on("message.created", (e) => { if (e.message) { this._messages.unshift(e.message); this._render(); } });
      for (const t of ["message.read", "message.seen", "message.unarchived"]) {
        on(t, (e) => this._replace(e.messageId, e.message));
      }
      on("message.archived", (e) => this._remove(e.messageId));
      on("message.deleted", (e) => this._remove(e.messageId));
      on("messages.read", (e) => { for (const m of this._messages) m.readAt = m.readAt || e.at; this._render(); });
      on("messages.seen", (e) => { for (const m of this._messages) m.seenAt = m.seenAt || e.at; });
      on("messages.archived", () => { this._messages = []; this._render(); });
      es.onerror = () => {
        // An EventSource retries by itself after a dropped connection; one
        // refused (an expired token) is closed: renew the token if we can.
        if (es.readyState === EventSource.CLOSED) this._renew();
      };
    }

    async _renew() {
      if (typeof this.tokenProvider !== "function") return;
      try {
        const t = await this.tokenProvider();
        if (t) this.setAttribute("token", t); // restarts the stream
      } catch (e) { /* try again at the next failure */ }
    }

    async _fetch(method, path) {
      const res = await fetch(this.baseURL + path, { method, headers: { Authorization: `Bearer ${this.token}` } });
      if (res.status === 401) { this._renew(); throw new Error("recipient token refused"); }
      if (!res.ok) throw new Error(`notifyd inbox: ${method} ${path}: ${res.status}`);
      return res.status === 204 ? {} : res.json();
    }

    async _load() {
      try {
        const page = await this._fetch("GET", "/v1/inbox/messages?limit=50");
        this._messages = page.messages;
        this._cursor = page.hasNext ? page.cursor : null;
        this._setCounts(page.counts);
        this._render();
      } catch (e) { /* the stream's next event tries again */ }
    }

    // _loadMore appends the next page of older messages; one the stream
    // added meanwhile is not listed twice.
    async _loadMore() {
      if (!this._cursor) return;
      try {
        const page = await this._fetch("GET", `/v1/inbox/messages?limit=50&cursor=${encodeURIComponent(this._cursor)}`);
        const have = new Set(this._messages.map((m) => m.id));
        this._messages.push(...page.messages.filter((m) => !have.has(m.id)));
        this._cursor = page.hasNext ? page.cursor : null;
        this._render();
      } catch (e) { /* the button stays for another try */ }
    }

    async _post(path, method = "POST") {
      try {
        const out = await this._fetch(method, path);
        if (out.counts) this._setCounts(out.counts);
      } catch (e) { /* shown by the next event */ }
    }

    _setCounts(c) {
      this._counts = c;
      this._badge.textContent = c.unread > 99 ? "99+" : String(c.unread);
      this._badge.hidden = c.unread === 0;
      this._bell.setAttribute("aria-label", `Notifications, ${c.unread} unread`);
      this.dispatchEvent(new CustomEvent("notifyd-counts", { detail: c }));
    }

    _toggle() {
      const open = this._panel.hidden;
      this._panel.hidden = !open;
      this._bell.setAttribute("aria-expanded", String(open));
      if (open && this._counts.unseen > 0) this._post("/v1/inbox/seen-all");
    }

    _replace(id, m) {
      const i = this._messages.findIndex((x) => x.id === id);
      if (i < 0 || !m) return;
      if (m.archivedAt) this._messages.splice(i, 1); else this._messages[i] = m;
      this._render();
    }

    _remove(id) {
      this._messages = this._messages.filter((x) => x.id !== id);
      this._render();
    }

    _render() {
      this._list.replaceChildren(...this._messages.map((m) => this._item(m)));
      this._empty.hidden = this._messages.length > 0;
      this._more.hidden = !this._cursor;
    }

    _item(m) {
      const li = document.createElement("li");
      li.setAttribute("part", "item");
      li.dataset.id = m.id;
      if (!m.readAt) li.classList.add("unread");
      const el = (tag, cls, text) => {
        const e = document.createElement(tag);
        e.className = cls;
        e.textContent = text;
        return e;
      };
      if (m.title) li.append(el("div", "title", m.title));
      li.append(el("div", "body", m.body));
      const meta = el("div", "meta", new Date(m.createdAt).toLocaleString());
      if (!m.readAt) {
        const read = el("button", "link read", "Mark read");
        read.type = "button";
        read.addEventListener("click", () => this._post(`/v1/inbox/messages/${m.id}/read`));
        meta.append(read);
      }
      const archive = el("button", "link archive", "Archive");
      archive.type = "button";
      archive.addEventListener("click", () => this._post(`/v1/inbox/messages/${m.id}/archive`));
      const del = el("button", "link delete", "Delete");
      del.type = "button";
      del.addEventListener("click", () => this._post(`/v1/inbox/messages/${m.id}`, "DELETE"));
      meta.append(archive, del);
      li.append(meta);
      if (m.actionUrl) {
        li.classList.add("clickable");
        const open = async () => {
          if (!m.readAt) await this._post(`/v1/inbox/messages/${m.id}/read`);
          window.location.assign(new URL(m.actionUrl, window.location.href).href);
        };
        for (const part of li.querySelectorAll(".title, .body")) part.addEventListener("click", open);
      }
      li.addEventListener("click", () => this.dispatchEvent(new CustomEvent("notifyd-message", { detail: m })));
      return li;
    }
  }

  customElements.define("notifyd-inbox", NotifydInbox);
})();
