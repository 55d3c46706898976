/* arena site: live standings. Served over HTTP (`arena serve`), a page that shows standings
   (the standings, a bot's page, head-to-head, the game lists) looks at live.json every 3
   seconds and reloads itself when the site was re-rendered with new results (a running
   league re-renders after each batch of games). Before it reloads, site.js saves what the
   reader chose (`window.arenaKeep`: the search box, hide retired, the sorted column, the
   scroll), and a reader typing in a box is not interrupted: the reload waits until the box
   loses focus. A game's page (its replay) and a page opened from disk (file://) never reload. */
(function () {
  "use strict";
  if (!/^https?:$/.test(location.protocol) || document.getElementById("replay")) return;
  var script = document.currentScript;
  var url = new URL("../live.json", script.src);  /* this script is in assets/ */
  var seen = script.getAttribute("data-version");
  var waiting = false;  /* new results, held back while the reader types */
  function typing() {
    var focused = document.activeElement;
    return !!focused && (focused.tagName === "TEXTAREA" ||
      (focused.tagName === "INPUT" && !/^(checkbox|radio|button|submit)$/.test(focused.type)));
  }
  function reload() {
    if (typing()) { waiting = true; return; }
    if (window.arenaKeep) window.arenaKeep();
    location.reload();
  }
  document.addEventListener("focusout", function () { if (waiting) setTimeout(reload, 0); });
  function check() {
    fetch(url, { cache: "no-store" }).then(function (answer) {
      return answer.ok ? answer.json() : null;
    }).then(function (live) {
      if (live && seen !== null && live.version !== seen) reload();
      if (live && seen === null) seen = live.version;
    }).catch(function () { /* the server is restarting: try again later */ });
  }
  setInterval(check, 3000);
  check();
})();
