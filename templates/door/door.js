/* arena: the authors' page. The token stays in this tab's sessionStorage and goes to the
   API as a bearer token (no cookie). Everything from the server is put in as text.

   What it shows is the truth of each bot: every version in its league state (playing,
   joined and waiting, suspended or retired with the reason), a name whose submissions were
   all refused with the last refusal's reasons, every refusal kept (an upload refused at
   the door, which never becomes a submission, is kept in this tab), and the status line
   of the last upload follows it to its end. Only the names the author owns (one of their
   submissions was accepted) are asked for at /api/bots/NAME, and one with nothing in the
   registry any more not again until another of its submissions is accepted. */
(function () {
  "use strict";
  var KEY = "arena-token", LAST = "arena-last-submission", REFUSED = "arena-upload-refusals";
  var missing = {};  // bot name -> accepted submissions it had when /api/bots/NAME answered 404
  var bots = {};     // bot name -> its last /api/bots answer
  function $(id) { return document.getElementById(id); }
  function token() { return sessionStorage.getItem(KEY); }
  function stored(key, fallback) {
    try { return JSON.parse(sessionStorage.getItem(key)) || fallback; } catch (e) { return fallback; }
  }
  function api(path, options) {
    options = options || {};
    options.headers = Object.assign({ Authorization: "Bearer " + token() }, options.headers || {});
    return fetch(path, options).then(function (answer) {
      return answer.json().catch(function () { return {}; }).then(function (body) {
        if (!answer.ok) {
          var error = new Error(body.error || ("HTTP " + answer.status));
          error.status = answer.status;
          throw error;
        }
        return body;
      });
    });
  }
  function el(tag, text, klass) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    if (klass) node.className = klass;
    return node;
  }
  function cell(row, text, klass) {
    var td = el("td", text, klass);
    row.appendChild(td);
    return td;
  }
  function reasonsList(reasons) {
    var list = el("ul", null, "reasons");
    reasons.forEach(function (reason) {
      var item = el("li");
      item.appendChild(el("pre", reason));
      list.appendChild(item);
    });
    return list;
  }
  function show(signedIn) {
    $("submit").hidden = $("mine").hidden = !signedIn;
    $("signin-form").hidden = signedIn;
  }

  // --- a version's state in the league -----------------------------------------------------
  function leagueState(member, standing) {
    if (!member) {
      if (!standing) return { klass: "accepted", text: "accepted; this server runs no league" };
      return { klass: "waiting", text: "accepted; waiting to join the league (it joins within seconds)" };
    }
    var since = member.left_at !== null && member.left_at !== undefined ? " from batch " + member.left_at : "";
    if (member.status === "suspended") return { klass: "suspended", text: "suspended" + since + ": " + member.reason };
    if (member.status === "retired") return { klass: "retired", text: "retired" + since + ": " + member.reason };
    if (member.status === "removed") return { klass: "removed", text: "removed" + since + (member.reason ? ": " + member.reason : "") };
    if (!member.games) return { klass: "waiting", text: "joined at batch " + member.joined_at + "; waiting for its first game" };
    return { klass: "playing", text: "playing, " + (member.settled ? "settled" : "provisional") };
  }
  function versionRows(name, bot) {
    var standing = bot.standing && bot.standing.joined !== undefined ? bot.standing : null;
    var members = (standing && standing.members) || [];
    var rows = [], seen = {};
    members.forEach(function (member) {
      var at = member.bot.indexOf("@");  // NAME@VERSION, or NAME@VERSION~HASH (the same version, other content)
      if (at >= 0) seen[member.bot.slice(at + 1).split("~")[0]] = true;
      rows.push({ bot: member.bot, member: member });
    });
    bot.versions.forEach(function (v) {
      if (!seen[v.version]) rows.push({ bot: name + "@" + v.version, member: null });
    });
    return rows.map(function (row) {
      var m = row.member, state = leagueState(m, bot.standing);
      var band = m && m.band ? " (90% band " + m.band[0] + "-" + m.band[1] + ")" : "";
      return {
        bot: row.bot, state: state,
        rank: m && m.rank ? m.rank + " of " + standing.of + band : "–",
        games: m ? String(m.games) : "–"
      };
    });
  }
  function lastOf(name, list) {
    for (var i = 0; i < list.length; i++) if (list[i].name === name) return list[i];
    return null;
  }
  function drawBots(names, list) {
    var box = $("bots");
    var made = document.createDocumentFragment();
    if (!names.length) made.appendChild(el("p", "No bots yet.", "muted"));
    names.forEach(function (name) {
      made.appendChild(el("h3", name));
      var bot = bots[name];
      if (!bot) {  // nothing of it in the registry: what became of its submissions
        var last = lastOf(name, list);
        var p = el("p");
        if (!last) p.textContent = "Nothing in the league yet.";
        else if (last.state === "refused") {
          p.appendChild(el("span", "not in the league", "state refused"));
          p.appendChild(document.createTextNode(": its last submission (" + last.version + ") was refused:"));
        } else if (last.state === "accepted") p.textContent = "Accepted as " + last.bot + "; no longer in the registry (retired).";
        else p.textContent = "Its submission (" + last.version + ") is being checked: " + last.state + ".";
        made.appendChild(p);
        if (last && last.state === "refused") made.appendChild(reasonsList(last.reasons));
        return;
      }
      var table = el("table", null, "compact versions");
      var head = el("thead"), tr = el("tr");
      ["version", "in the league", "rank", "games"].forEach(function (h) {
        var th = el("th", h);
        th.scope = "col";
        tr.appendChild(th);
      });
      head.appendChild(tr);
      table.appendChild(head);
      var body = el("tbody");
      versionRows(name, bot).forEach(function (row) {
        var line = el("tr");
        cell(line, row.bot);
        cell(line, row.state.text, "state " + row.state.klass);
        cell(line, row.rank);
        cell(line, row.games);
        body.appendChild(line);
      });
      table.appendChild(body);
      made.appendChild(table);
    });
    box.textContent = "";
    box.appendChild(made);
  }

  // --- submissions, and the uploads the door refused outright -------------------------------
  function versionState(name, version) {
    var bot = bots[name];
    if (!bot) return null;
    var rows = versionRows(name, bot);
    for (var i = rows.length - 1; i >= 0; i--) {
      if (rows[i].bot === name + "@" + version || rows[i].bot.indexOf(name + "@" + version + "~") === 0) return rows[i].state;
    }
    return null;
  }
  function drawSubmissions(list) {
    var rows = list.map(function (s) { return { when: s.created, s: s }; });
    stored(REFUSED, []).forEach(function (r) { rows.push({ when: r.when, r: r }); });
    rows.sort(function (a, b) { return b.when - a.when; });
    var body = el("tbody");
    rows.forEach(function (entry) {
      var row = el("tr"), reasons = [];
      cell(row, new Date(entry.when * 1000).toLocaleString());
      if (entry.r) {  // refused at the door: never a submission
        cell(row, entry.r.file);
        cell(row, "refused at upload (" + entry.r.status + ")", "state refused");
        reasons = [entry.r.error];
      } else {
        var s = entry.s, state = s.state;
        cell(row, s.name + " " + s.version);
        var league = s.state === "accepted" ? versionState(s.name, s.version) : null;
        var td = cell(row, state, "state " + state.replace(" ", "-"));
        if (league && league.klass !== "playing") {
          td.appendChild(document.createTextNode("; now "));
          td.appendChild(el("span", league.text.split(":")[0], "state " + league.klass));
        }
        reasons = s.reasons;
      }
      body.appendChild(row);
      if (reasons.length) {  // the reasons on a row of their own, the table's whole width
        row.className = "has-reasons";
        var more = el("tr", null, "reasons-row"), td2 = el("td");
        td2.colSpan = 3;
        td2.appendChild(el("span", "Reasons:", "sr-only"));
        td2.appendChild(reasonsList(reasons));
        more.appendChild(td2);
        body.appendChild(more);
      }
    });
    var table = $("submissions");
    table.replaceChild(body, table.tBodies[0]);
  }
  function drawLast(list) {
    var last = stored(LAST, null);
    if (!last) return;
    for (var i = 0; i < list.length; i++) {
      var s = list[i];
      if (s.id !== last) continue;
      var said = "Submission " + s.id + " (" + s.name + " " + s.version + "): ";
      if (s.state === "accepted") said += "accepted as " + s.bot + ".";
      else if (s.state === "refused") said += "refused: " + s.reasons.length + " reason" + (s.reasons.length === 1 ? "" : "s") + " below.";
      else said += s.state + "…";
      if ($("submit-state").textContent !== said) $("submit-state").textContent = said;
      return;
    }
  }

  function refresh() {
    if (!token()) return;
    var me;
    api("/api/me").then(function (answer) {
      me = answer;
      show(true);
      $("signin-state").textContent = "Signed in as " + me.author + (me.organiser ? " (organiser)" : "");
      return api("/api/submissions");
    }).then(function (answer) {
      var list = answer.submissions;
      // A name is the author's once a submission of it is accepted; one whose submissions
      // were all refused (or are being checked) is listed too, from the submissions.
      var names = me.bots.slice();
      list.forEach(function (s) {
        if (s.author === me.author && names.indexOf(s.name) < 0) names.push(s.name);
      });
      var asks = me.bots.map(function (name) {
        var accepted = list.filter(function (s) { return s.name === name && s.state === "accepted"; }).length;
        if (missing[name] !== undefined && missing[name] === accepted) return Promise.resolve();
        return api("/api/bots/" + encodeURIComponent(name)).then(function (bot) {
          bots[name] = bot;
          delete missing[name];
        }).catch(function (error) {
          if (error.status !== 404) return;
          delete bots[name];
          missing[name] = accepted;  // not asked again until another of its submissions is accepted
        });
      });
      return Promise.all(asks).then(function () {
        drawBots(names, list);
        drawSubmissions(list);
        drawLast(list);
      });
    }).catch(function (error) {
      if (error.status !== 401) return;  // a passing failure: the next refresh tries again
      $("signin-state").textContent = error.message;
      sessionStorage.removeItem(KEY);
      show(false);
    });
  }
  $("here").textContent = location.origin + "/";
  $("signin-form").addEventListener("submit", function (event) {
    event.preventDefault();
    sessionStorage.setItem(KEY, $("token").value.trim());
    $("token").value = "";
    refresh();
  });
  $("signout").addEventListener("click", function () {
    [KEY, LAST, REFUSED].forEach(function (key) { sessionStorage.removeItem(key); });
    missing = {};
    bots = {};
    show(false);
    $("submit-state").textContent = "";
    $("signin-state").textContent = "Signed out.";
  });
  $("submit-form").addEventListener("submit", function (event) {
    event.preventDefault();
    var file = $("bot").files[0];
    var form = new FormData();
    form.append("bot", file);
    $("submit-state").textContent = "Uploading " + file.name + "…";
    api("/api/submissions", { method: "POST", body: form }).then(function (made) {
      sessionStorage.setItem(LAST, JSON.stringify(made.id));
      $("submit-state").textContent = "Submission " + made.id + " (" + made.name + " " + made.version + "): queued…";
      refresh();
    }).catch(function (error) {
      var refusals = stored(REFUSED, []);
      refusals.push({ when: Date.now() / 1000, file: file.name, status: error.status || "no answer", error: error.message });
      sessionStorage.setItem(REFUSED, JSON.stringify(refusals.slice(-50)));
      sessionStorage.removeItem(LAST);
      $("submit-state").textContent = file.name + " was refused: " + error.message;
      refresh();
    });
  });
  show(false);
  refresh();
  setInterval(refresh, 3000);
})();
