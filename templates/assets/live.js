/* arena site: live standings. Served over HTTP (`arena serve`), a page that shows standings
   (the standings, a bot's page, head-to-head, the game lists) looks at live.json every 3
   seconds and, when the site was re-rendered with new results (a running league re-renders
   after each batch of games), reloads itself, but at most once every 15 seconds (from
   when it was loaded): a fast league would otherwise reload it faster than anyone can
   read. Between, a note at the top says new results are in, with a button that shows
   them at once. Before it reloads, site.js saves what the reader chose (`window.arenaKeep`:
   the search box, hide retired, the sorted column, the scroll), and a reader typing in a
   box is not interrupted: the reload waits until the box loses focus. A game's page (its
   replay) and a page opened from disk (file://) never reload. */
(function () {
  "use strict";
  if (!/^https?:$/.test(location.protocol) || document.getElementById("replay")) return;
  var LOOK_MS = 3000;      /* how often live.json is looked at */
  var RELOAD_MS = 15000;   /* at most one reload in this long */
  var script = document.currentScript;
  var url = new URL("../live.json", script.src);  /* this script is in assets/ */
  var seen = script.getAttribute("data-version");
  var loaded = Date.now();
  var fresh = false;    /* live.json changed since the page was loaded */
  var waiting = false;  /* new results, held back while the reader types */
  var timer = null;
  var note = null;
  function typing() {
    var focused = document.activeElement;
    return !!focused && (focused.tagName === "TEXTAREA" ||
      (focused.tagName === "INPUT" && !/^(checkbox|radio|button|submit)$/.test(focused.type)));
  }
  function reloadNow() {
    if (window.arenaKeep) window.arenaKeep();
    location.reload();
  }
  function reload() {
    if (!fresh) return;
    var wait = loaded + RELOAD_MS - Date.now();
    if (wait > 0) {
      if (!timer) timer = setTimeout(function () { timer = null; reload(); }, wait);
      return;
    }
    if (typing()) { waiting = true; return; }
    reloadNow();
  }
  function tell() {
    if (note) return;
    var main = document.querySelector("main");
    if (!main) return;
    note = document.createElement("p");
    note.className = "live-note";
    note.id = "live-note";
    note.setAttribute("role", "status");
    note.textContent = "New results are in: this page shows them within 15 seconds (not while you type in a box). ";
    var now = document.createElement("button");
    now.type = "button";
    now.textContent = "show them now";
    now.addEventListener("click", reloadNow);
    note.appendChild(now);
    main.insertBefore(note, main.firstChild);
  }
  document.addEventListener("focusout", function () {
    if (waiting) { waiting = false; setTimeout(reload, 0); }
  });
  function check() {
    fetch(url, { cache: "no-store" }).then(function (answer) {
      return answer.ok ? answer.json() : null;
    }).then(function (live) {
      if (live && seen !== null && live.version !== seen) { fresh = true; tell(); reload(); }
      if (live && seen === null) seen = live.version;
    }).catch(function () { /* the server is restarting: try again later */ });
  }
  setInterval(check, LOOK_MS);
  check();
})();
