/* Three Thirteen in the site's replay viewer: how its cards, actions, events and table are drawn.
   The tables come from replay.py beside this file; the viewer (templates/assets/replay.js)
   loads this script as assets/replay-three-thirteen.js and passes `kit`, its drawing helpers.
   Everything from the data is put in the page with textContent (kit.el), never as markup. */
(function () {
  "use strict";
  var SUITS = { S: "♠", H: "♥", D: "♦", C: "♣" };
  var RANKS = { 1: "A", 11: "J", 12: "Q", 13: "K", 14: "A" };

  (window.ARENA_VIEWERS = window.ARENA_VIEWERS || {})["three-thirteen"] = function (kit) {
    var el = kit.el, zone = kit.zone, cardRow = kit.cardRow, pile = kit.pile, labelledPile = kit.labelledPile;
    var seatName = kit.seatName, cardName = kit.cardName, card = kit.card, players = kit.players;
    var steps = kit.steps, seats = kit.data.seats;
    // The official places when the viewer knows the stored result (forfeits last), else the game's.
    var official = kit.places || null, forfeits = kit.forfeits || [];
    var wild = null; // the wild rank of the frame being drawn

    function faceName(face) { return (RANKS[face[0]] || face[0]) + SUITS[face[1]]; }
    function cardNode(face, id) {
      var red = face[1] === "H" || face[1] === "D";
      var node = el("span", "pcard " + (red ? "red" : "black") + (face[0] === wild ? " wild" : ""), RANKS[face[0]] || face[0]);
      node.appendChild(el("small", null, SUITS[face[1]]));
      node.title = cardName(id) + (face[0] === wild ? " (wild)" : "");
      return node;
    }
    function actionText(action) {
      switch (action.type) {
        case "draw": return "draws from the " + (action.source === "stock" ? "stock" : "discard pile");
        case "discard": return "discards " + cardName(action.card);
        case "go_out": return "goes out, discarding " + cardName(action.card);
        default: return null;
      }
    }
    function eventText(event, who) {
      switch (event.type) {
        case "game_over": return gameOver(event.places || []);
        case "round_start": return "round " + event.round + " starts, " + (RANKS[event.wild_rank] || event.wild_rank) + "s are wild";
        case "reshuffle": return "the discard pile is reshuffled into the stock (" + event.stock_size + " cards)";
        case "round_end": return "round " + event.round + " ends (" + String(event.reason).replace(/_/g, " ") + "): penalties " + (event.penalties || []).join(", ");
        case "draw": return who + "draws " + event.count;
        default: return null; // go_out: the action itself says it; the melds are on the table
      }
    }
    function gameOver(places) {
      if (!official) return "game over: places " + places.join(", ");
      var text = "game over: places " + official.join(", ");
      if (forfeits.length) {
        text += " (" + (forfeits.length === 1 ? "seat " : "seats ") + forfeits.join(", ") + " forfeited: " +
          (forfeits.length === 1 ? "a forfeit takes" : "forfeits share") + " the last place; as played: " + places.join(", ") + ")";
      }
      return text;
    }
    function meldRow(melds) {
      var row = el("div");
      melds.forEach(function (meld) {
        var m = el("span", "meld");
        meld.cards.forEach(function (id) { m.appendChild(card(id)); });
        m.title = meld.kind;
        row.appendChild(m);
      });
      return row;
    }
    function draw(t, seat, box, index) {
      wild = t.wild;
      var centre = el("div", "centre");
      var info = el("div", "pile");
      info.appendChild(el("div", "label", "round " + t.round + " of 11"));
      info.appendChild(el("div", "count", (RANKS[t.wild] || t.wild) + "s are wild · dealer seat " + t.dealer + " · turn " + t.turn));
      if (t.final_left) info.appendChild(el("div", "count", t.final_left + (t.final_left === 1 ? " final turn left" : " final turns left")));
      centre.appendChild(info);
      centre.appendChild(labelledPile("stock", pile(t.stock)));
      centre.appendChild(labelledPile("discard pile (" + (t.discard || []).length + ")", cardRow(t.discard, 6)));
      box.appendChild(centre);
      var grid = el("div", "seats");
      for (var s = 0; s < players; s++) {
        var sb = el("div", "seatbox" + (t.cur === s ? " turn" : ""));
        sb.setAttribute("data-seat", String(s));
        var who = el("div", "who");
        who.appendChild(el("span", null, seatName(s) + (seat === s ? " (this view)" : "")));
        who.appendChild(el("span", "count", "total " + t.totals[s]));
        if (official && index === steps.length) {  // the end: the official place (a forfeit is last)
          var badge = el("span", "place p" + official[s], official[s]);
          if (forfeits.indexOf(s) >= 0) badge.title = "forfeited: last place, whatever the fallback player did";
          who.appendChild(badge);
        }
        sb.appendChild(who);
        zone(sb, "hand", cardRow(t["h" + s], 0, function (id) { return id === t.taken ? "taken" : null; }));
        if (t.went_out === s && t.laid && t.laid.length) zone(sb, "went out, laid down", meldRow(t.laid));
        grid.appendChild(sb);
      }
      box.appendChild(grid);
      // The previous round's hands as the referee scored them: combinations and deadwood.
      if (t.last) {
        wild = t.last.wild; // these cards were wild by that round's rank: set before they are drawn
        var scored = el("div", "seats");
        t.last.hands.forEach(function (hand, p) {
          var hb = el("div", "seatbox");
          hb.appendChild(el("div", "who", seatName(p) + ": +" + hand.penalty));
          var melds = meldRow(hand.melds);
          if (!hand.melds.length) melds.appendChild(el("span", "count", "no combination"));
          zone(hb, "combinations", melds);
          zone(hb, "deadwood", cardRow(hand.deadwood));
          scored.appendChild(hb);
        });
        zone(box, "round " + t.last.round + " as scored (" + String(t.last.reason).replace(/_/g, " ") + ")", scored);
        wild = t.wild;
      }
      // Scores per round, from the round_end events up to this step.
      var rows = [];
      for (var i = 0; i < index; i++) {
        (steps[i][2] || []).forEach(function (event) { if (event.type === "round_end") rows.push(event); });
      }
      if (rows.length) {
        var table = el("table", "scoretable");
        var head = el("tr");
        head.appendChild(el("th", null, "round"));
        for (s = 0; s < players; s++) head.appendChild(el("th", null, seats[s]));
        table.appendChild(head);
        rows.forEach(function (event) {
          var tr = el("tr");
          tr.appendChild(el("td", null, event.round + " (" + (RANKS[event.wild_rank] || event.wild_rank) + " wild)"));
          for (var p = 0; p < players; p++) tr.appendChild(el("td", null, "+" + event.penalties[p] + " = " + event.totals[p]));
          table.appendChild(tr);
        });
        // Wider than a phone with many seats: it scrolls inside the table, never past it.
        var scroller = el("div", "scorescroll");
        scroller.tabIndex = 0;
        scroller.setAttribute("role", "region");
        scroller.setAttribute("aria-label", "scores per round");
        scroller.setAttribute("data-focus", "scores"); // kept focused across a redraw (replay.js)
        scroller.appendChild(table);
        zone(box, "scores per round", scroller);
      }
    }
    return { faceName: faceName, cardNode: cardNode, actionText: actionText, eventText: eventText, draw: draw };
  };
})();
