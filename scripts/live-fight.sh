#!/usr/bin/env bash
# live-fight.sh: play a whole fight of ØMEN from the shell, with physical dice typed in.
#
#   scripts/live-fight.sh [WORKDIR]          (default WORKDIR: ./live-fight)
#
# Environment:
#   OMEN     how to call omen (default "omen"; e.g. OMEN="python -m omen_cli")
#   PYTHON   a Python 3 to read omen's JSON with (default "python3"; only its standard library is used)
#   SHEETS   where the sheets are (default: the Ember Ford sheets that ship with omen)
#
# The fight: Kael Arden (a Warden with longsword and kite shield) meets Vesh the Cinder-Hand (a raider with a
# curved knife) at the ford. `omen run` only sets the fight up (dice = "manual": the table rolls real dice);
# every command after that is one `omen do`, the faces the table rolled in its "dice" list, in the order
# `omen status` lists them (C29). Half-way the GM notices a misread die, undoes the attack and plays it again.
# Vesh falls in round 2 and the fight ends by itself (a side all down); `omen verify` checks the whole log.
#
# Every step is printed as the command a GM would type. The faces below are fixed, so the fight always goes the
# same way; the comments work out each roll from the sheets (docs/scenarios.md lists every command).
set -eu
if (set -o pipefail) 2>/dev/null; then set -o pipefail; fi  # bash, and most sh: a failing `omen status` stops us

OMEN=${OMEN:-omen}
PYTHON=${PYTHON:-python3}
HERE=$(cd "$(dirname "$0")" && pwd)
SHEETS=${SHEETS:-$HERE/../omen_replay/data/ember-ford/sheets}
WORK=${1:-live-fight}
LOG="$WORK/ford.jsonl"

say() { printf '\n== %s\n' "$*"; }

omen() {  # print the command as typed, then run it ($OMEN may be several words: it is split on purpose)
    shown="\$ omen"
    for arg in "$@"; do
        case $arg in
            *"'"*) shown="$shown \"$arg\"" ;;  # Kael's player: in double quotes
            *[!A-Za-z0-9_./:=+-]*) shown="$shown '$arg'" ;;
            *) shown="$shown $arg" ;;
        esac
    done
    printf '%s\n' "$shown"
    command $OMEN "$@"  # `command`: the real omen, not this function, when OMEN is plain "omen"
}

now() {  # now EXPR: a Python expression on the options (`omen status --json`, bound to o), printed
    command $OMEN status "$LOG" --json | "$PYTHON" -c "import json, sys; o = json.load(sys.stdin); print($1)"
}

# What the fight waits for, from `omen status --json`: the open decision's kind and who answers it
# ("active_defense vesh", "interrupt kael"), "nothing" between actions, or "ended".
WAITING='"ended" if o["phase"] == "ended"
    else o["waiting"]["kind"] + " " + " ".join(o["waiting"]["who"]) if o["waiting"]
    else "nothing"'

expect() {  # expect KIND [WHO]: stop the script unless the fight waits for that
    found=$(now "$WAITING")
    case $found in
        "$*"|"$* "*) printf '   (the fight waits for: %s)\n' "$found" ;;
        *) printf 'live-fight.sh: expected the fight to wait for "%s", but it waits for "%s"\n' "$*" "$found" >&2
           exit 1 ;;
    esac
}

standing() {  # everyone's HP now: "kael 24 HP, vesh 0 HP"
    now "', '.join(c['who'] + ' ' + str(c['hp']) + ' HP' for c in o['combatants'])"
}

if [ -e "$LOG" ]; then
    echo "live-fight.sh: $LOG exists already; remove it or give another work dir" >&2
    exit 2
fi
mkdir -p "$WORK"

say "Set-up: the fight and its combatants, nothing else (dice = \"manual\": the table rolls)"
cat > "$WORK/ford.toml" <<EOF
[fight]
id = "ford"
title = "Steel at the ford"
dice = "manual"

[[combatants]]
sheet = "$SHEETS/kael.toml"

[[combatants]]
sheet = "$SHEETS/vesh.toml"
EOF
omen run "$WORK/ford.toml" --log "$LOG" --quiet

say "The GM states positions: Kael and Vesh meet in the water, within reach"
omen do "$LOG" '{"command": "engage", "who": "kael", "others": ["vesh"]}' --by GM

say "Initiative (C19): Kael's AGI d6 shows 5 (+1 = 6), Vesh's AGI d8 shows 2 (+2 = 4): Kael goes first"
omen do "$LOG" '{"command": "roll_initiative", "dice": [5, 2]}' --by GM
HEAD=$(now 'o["head"]')
echo "   (the GM writes down the head, to check later that the log still passes through it: $HEAD)"

say "Round 1, Kael attacks Vesh with his longsword"
# Vesh has not had her first turn yet, so she cannot Interrupt (her Bonus Actions are for defence only).
# Dice: Kael's STR d8 = 4 and FCS d6 = 2, Vesh's RES d6 = 3. Hit 4 + 2 + 4 (STR 2, sword 1, training 1) = 10
# against Vesh's base defense 3 + 2 (RES 1, armor 1) = 5: Vesh may defend (C8).
omen do "$LOG" '{"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword", "dice": [4, 2, 3]}' --by "Kael's player"
expect active_defense vesh

say "Vesh dodges (1 Bonus Action): her AGI d8 shows 6, defense 5 + 6 + 2 = 13 against 10: a miss"
omen do "$LOG" 'command = "answer_active_defense"
defender = "vesh"
defense = "dodge"
dice = [6]' --by "Vesh's player"

say "Kael ends his turn; Vesh's turn begins (her Bonus Actions refill, C20)"
omen do "$LOG" '{"command": "end_turn", "who": "kael"}' --by "Kael's player"

say "Vesh attacks Kael with her knife: Kael, adjacent and with both Bonus Actions, may Interrupt first (C24)"
omen do "$LOG" '{"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife"}' --by "Vesh's player"
expect interrupt kael

say "Kael lets it pass, and the attack rolls: the faces as the GM reads them out"
# Vesh's AGI d8 (the knife is finesse), her FCS d6, then Kael's RES d8.
omen do "$LOG" '{"command": "pass_reaction", "who": "kael", "dice": [8, 5, 2]}' --by "Kael's player"
expect active_defense kael

say "Wait: Vesh's d8 shows a 3, not an 8. The GM undoes the attack (nothing is erased: the log records the undo)"
# An undo goes back to where nothing was in progress: here to Vesh's declaration, so she declares again.
omen undo "$LOG" --reason "misread Vesh's d8: it showed a 3"
expect nothing

say "Vesh attacks again, and Kael lets it pass again, with the faces as they really are"
omen do "$LOG" '{"command": "declare_attack", "attacker": "vesh", "target": "kael", "weapon": "knife"}' --by "Vesh's player"
expect interrupt kael
# Hit 3 + 5 + 3 (AGI 2, knife 1) = 11 against Kael's base defense 2 + 4 (RES 2, armor 2) = 6: Kael may defend.
omen do "$LOG" 'command = "pass_reaction"
who = "kael"
dice = [3, 5, 2]' --by "Kael's player"
expect active_defense kael

say "Kael raises his shield (Block, 1 Bonus Action), from a file his player filled in"
# Kael's RES d8 shows 4: defense 6 + 4 + 2 (RES) + 2 (the shield's block rating) = 14 against 11: a miss.
cat > "$WORK/block.toml" <<'EOF'
command = "answer_active_defense"
defender = "kael"
defense = "block"
dice = [4]
EOF
omen do "$LOG" --file "$WORK/block.toml" --by "Kael's player"

say "Vesh ends her turn: round 2 begins with Kael's"
omen do "$LOG" '{"command": "end_turn", "who": "vesh"}' --by "Vesh's player"

say "Round 2, Kael attacks again: this time Vesh, who has had her turn, may Interrupt"
omen do "$LOG" '{"command": "declare_attack", "attacker": "kael", "target": "vesh", "weapon": "longsword"}' --by "Kael's player"
expect interrupt vesh

say "Vesh strikes first (2 Bonus Actions). Which dice? Give none and omen lists them (and writes nothing)"
omen do "$LOG" '{"command": "react", "who": "vesh", "weapon": "knife"}' --by "Vesh's player" \
    || echo "   (refused, as it should be: roll those dice and give the faces)"

say "Vesh's Interrupt, then Kael's attack, in one command: six faces"
# Vesh: AGI d8 2, FCS d6 1; Kael's RES d8 4: 2 + 1 + 3 = 6 against 4 + 4 = 8, a miss (no defence needed).
# Kael's attack goes on: STR d8 7, FCS d6 6; Vesh's RES d6 1: 7 + 6 + 4 = 17 against 1 + 2 = 3, and Vesh has
# no Bonus Action left to defend. FCS 6 + 1 beats RES 1 + 1: a critical hit (C7). Damage 7 + 2 (STR) + 2 (crit)
# + 4 (longsword) = 15, less 1 for her leathers: 14, and Vesh has 12 HP.
omen do "$LOG" '{"command": "react", "who": "vesh", "weapon": "knife", "dice": [2, 1, 4, 7, 6, 1]}' --by "Vesh's player"
expect ended
echo "   (standing: $(standing))"

say "The fight is over. Check the whole log: every command decided again, every total recomputed"
omen verify "$LOG" --head "$HEAD"
echo
echo "live-fight.sh: done; the log is $LOG (try: omen log $LOG)"
