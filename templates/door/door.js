/* arena: the authors' page. The token stays in this tab's sessionStorage and goes to the
   API as a bearer token (no cookie). Everything from the server is put in as text. */
(function () {
  "use strict";
  var KEY = "arena-token";
  function $(id) { return document.getElementById(id); }
  function token() { return sessionStorage.getItem(KEY); }
  function api(path, options) {
    options = options || {};
    options.headers = Object.assign({ Authorization: "Bearer " + token() }, options.headers || {});
    return fetch(path, options).then(function (answer) {
      return answer.json().catch(function () { return {}; }).then(function (body) {
        if (!answer.ok) throw new Error(body.error || ("HTTP " + answer.status));
        return body;
      });
    });
  }
  function cell(row, text, klass) {
    var td = document.createElement("td");
    td.textContent = text;
    if (klass) td.className = klass;
    row.appendChild(td);
    return td;
  }
  function show(signedIn) {
    $("submit").hidden = $("mine").hidden = !signedIn;
    $("signin-form").hidden = signedIn;
  }
  function refresh() {
    if (!token()) return;
    api("/api/me").then(function (me) {
      show(true);
      $("signin-state").textContent = "Signed in as " + me.author + (me.organiser ? " (organiser)" : "");
      var bots = $("bots");
      bots.textContent = "";
      if (!me.bots.length) bots.textContent = "No bots yet.";
      me.bots.forEach(function (name) {
        api("/api/bots/" + encodeURIComponent(name)).then(function (bot) {
          var p = document.createElement("p");
          var versions = bot.versions.map(function (v) { return v.version; }).join(", ");
          var s = bot.standing, where = "";
          if (s && s.joined) where = "; " + s.bot + ": rank " + s.rank + " of " + s.of +
            (s.band ? " (90% band " + s.band[0] + "-" + s.band[1] + ")" : "") + ", " + s.games +
            " games, " + (s.status !== "active" ? s.status : (s.settled ? "settled" : "provisional"));
          p.textContent = name + ": versions " + versions + where;
          bots.appendChild(p);
        }).catch(function () {});
      });
      return api("/api/submissions");
    }).then(function (list) {
      if (!list) return;
      var body = $("submissions").tBodies[0];
      body.textContent = "";
      list.submissions.forEach(function (s) {
        var row = document.createElement("tr");
        cell(row, new Date(s.created * 1000).toLocaleString());
        cell(row, s.name + " " + s.version);
        cell(row, s.state, s.state);
        var reasons = cell(row, "");
        if (s.reasons.length) {
          var pre = document.createElement("pre");
          pre.textContent = s.reasons.join("\n");
          reasons.appendChild(pre);
        }
        body.appendChild(row);
      });
    }).catch(function (error) {
      $("signin-state").textContent = error.message;
      sessionStorage.removeItem(KEY);
      show(false);
    });
  }
  $("signin-form").addEventListener("submit", function (event) {
    event.preventDefault();
    sessionStorage.setItem(KEY, $("token").value.trim());
    $("token").value = "";
    refresh();
  });
  $("signout").addEventListener("click", function () {
    sessionStorage.removeItem(KEY);
    show(false);
    $("signin-state").textContent = "Signed out.";
  });
  $("submit-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var form = new FormData();
    form.append("bot", $("bot").files[0]);
    $("submit-state").textContent = "Uploading...";
    api("/api/submissions", { method: "POST", body: form }).then(function (made) {
      $("submit-state").textContent = "Submission " + made.id + " (" + made.name + " " + made.version + ") queued.";
      refresh();
    }).catch(function (error) { $("submit-state").textContent = "Refused: " + error.message; });
  });
  show(false);
  refresh();
  setInterval(refresh, 3000);
})();
