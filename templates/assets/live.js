/* arena site: live standings. Served over HTTP (`arena serve`), a page that shows standings
   looks at live.json every few seconds and reloads itself when the site was re-rendered with
   new results (a running league re-renders after each batch of games). A game's page (its
   replay) and a page opened from disk (file://) never reload. */
(function () {
  "use strict";
  if (!/^https?:$/.test(location.protocol) || document.getElementById("replay")) return;
  var script = document.currentScript;
  var url = new URL("../live.json", script.src);  /* this script is in assets/ */
  var seen = script.getAttribute("data-version");
  function check() {
    fetch(url, { cache: "no-store" }).then(function (answer) {
      return answer.ok ? answer.json() : null;
    }).then(function (live) {
      if (live && seen !== null && live.version !== seen) location.reload();
      if (live && seen === null) seen = live.version;
    }).catch(function () { /* the server is restarting: try again later */ });
  }
  setInterval(check, 3000);
  check();
})();
