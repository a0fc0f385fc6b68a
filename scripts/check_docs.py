#!/usr/bin/env python3
"""The checks behind scripts/check-docs (Python 3 standard library only).

Three checks, each problem printed as `path:line: error: message`:

1. DocC: `docc convert` on the Gatehouse catalog with the Gatehouse module's symbol graph (which
   holds the re-exported GatehouseAPI symbols too), and on GatehouseAPI's symbol graph alone; every
   diagnostic is a problem. A link to a type the SDK declares only under an Apple-only `#if`
   (Keychain, Secure Enclave) cannot be resolved from a Linux build: it is checked against the
   source instead and printed as a note.
2. docs/seed-coverage.md, Gatehouse SDK names in backticks: resolved against the same symbol graph
   (type, member, argument labels, chained members through the member's type).
3. docs/seed-coverage.md, test ids: every id it cites must be defined in its "Test ids" tables (or
   inline, like **CORE-1**), and every definition must name a real `@Test("…")` display name in the
   test file it gives.

Run it through scripts/check-docs, which builds the symbol graphs first.
"""
import argparse
import difflib
import glob
import json
import os
import re
import subprocess
import sys
from collections import defaultdict

PROBLEMS = []  # (path, line, message)
NOTES = []     # (path, line, message): checked, but only against the source
SKIPPED = []   # (path, line, item, reason): printed with --verbose

ROOT = "."


def rel(path):
    path = os.path.abspath(path)
    try:
        r = os.path.relpath(path, ROOT)
    except ValueError:
        return path
    return path if r.startswith("..") else r


def problem(path, line, msg):
    PROBLEMS.append((rel(path), line, msg))


def note(path, line, msg):
    NOTES.append((rel(path), line, msg))


# --------------------------------------------------------------------------------------------
# Source scan: declarations compiled only on Apple platforms (absent from a Linux symbol graph)

APPLE_ONLY_COND = re.compile(
    r"canImport\((Security|LocalAuthentication|CryptoKit|UIKit|AppKit|WatchKit|AuthenticationServices)\)"
    r"|os\((iOS|macOS|tvOS|watchOS|visionOS)\)"
)
DECL = re.compile(
    r"^\s*(?:@[\w.]+(?:\([^)]*\))?\s+)*(?:(?:public|open|package|internal|fileprivate|private|final|"
    r"indirect|nonisolated)\s+)*(class|struct|enum|protocol|actor|typealias|extension)\s+([A-Za-z_][\w.]*)"
)
MEMBER_DECL = re.compile(
    r"\b(?:func\s+([A-Za-z_]\w*)|(?:var|let)\s+([A-Za-z_]\w*)|case\s+([A-Za-z_]\w*)|(init)\s*[?!]?\s*[(<])"
)


class SourceScan:
    """Which SDK declarations sit under an Apple-only #if, and what those regions declare."""

    def __init__(self, source_dirs):
        self.apple_types = {}       # type name -> (file, line, condition)
        self.apple_members = set()  # member base names declared in Apple-only regions
        self.apple_words = {}       # any identifier used in Apple-only regions -> (file, line)
        for d in source_dirs:
            for f in sorted(glob.glob(os.path.join(d, "**", "*.swift"), recursive=True)):
                self._scan(f)

    def _scan(self, path):
        stack = []  # (condition text, apple_only for the active branch)
        with open(path, encoding="utf-8") as fh:
            lines = fh.read().split("\n")
        for no, line in enumerate(lines, 1):
            s = line.strip()
            m = re.match(r"#(if|elseif|else|endif)\b(.*)", s)
            if m:
                kind, cond = m.group(1), m.group(2).strip()
                if kind == "if":
                    stack.append((cond, bool(APPLE_ONLY_COND.search(cond)) and not cond.startswith("!")))
                elif kind == "elseif" and stack:
                    stack[-1] = (cond, bool(APPLE_ONLY_COND.search(cond)) and not cond.startswith("!"))
                elif kind == "else" and stack:
                    stack[-1] = ("!(" + stack[-1][0] + ")", False)
                elif kind == "endif" and stack:
                    stack.pop()
                continue
            apple = [c for c, a in stack if a]
            if not apple or s.startswith("//"):
                continue
            d = DECL.match(line)
            if d and d.group(1) != "extension":
                self.apple_types.setdefault(d.group(2).split(".")[-1], (path, no, apple[0]))
            for mm in MEMBER_DECL.finditer(line):
                self.apple_members.add(next(g for g in mm.groups() if g))
            for w in re.findall(r"[A-Za-z_]\w*", line):
                self.apple_words.setdefault(w, (path, no))


def project_declarations(dirs):
    """Type names declared anywhere else in the project (server, tests): not SDK symbols."""
    found = {}
    for d in dirs:
        for f in sorted(glob.glob(os.path.join(d, "**", "*.swift"), recursive=True)):
            with open(f, encoding="utf-8") as fh:
                for no, line in enumerate(fh, 1):
                    m = DECL.match(line)
                    if m and m.group(1) != "extension":
                        found.setdefault(m.group(2).split(".")[-1], (f, no))
    return found


# --------------------------------------------------------------------------------------------
# Symbol graph index

TYPE_KINDS = {"swift.struct", "swift.class", "swift.enum", "swift.protocol", "swift.typealias",
              "swift.actor", "swift.associatedtype"}


def split_name(component):
    """'logIn(email:password:)' -> ('logIn', ['email', 'password']); 'isNew' -> ('isNew', None)."""
    m = re.match(r"^([^(]+)\((.*)\)$", component)
    if not m:
        return component, None
    inner = m.group(2)
    labels = [x for x in inner.split(":")[:-1]] if inner else []
    return m.group(1), labels


class Member:
    def __init__(self, sym, parent):
        self.sym = sym
        self.parent = parent
        self.base, self.labels = split_name(sym["pathComponents"][-1])
        self.kind = sym["kind"]["identifier"]
        self._defaults = None

    def result_type_id(self):
        """Precise id of the type a property has or a function returns (None if not a plain type)."""
        frags = self.sym.get("declarationFragments") or []
        start = None
        for i, f in enumerate(frags):
            if f["kind"] == "text" and "->" in f["spelling"]:
                start = i
        if start is None:
            if self.labels is not None:
                return None
            for i, f in enumerate(frags):
                if f["kind"] == "text" and ":" in f["spelling"]:
                    start = i
                    break
        if start is None:
            return None
        for i in range(start + 1, len(frags)):
            f = frags[i]
            if f["kind"] == "typeIdentifier":
                before = frags[i - 1]["spelling"] if i > 0 else ""
                if "[" in before or "<" in before:
                    return None
                return f.get("preciseIdentifier")
        return None

    def defaults(self):
        """Which parameters have default values, read from the declaration in the source."""
        if self._defaults is not None:
            return self._defaults
        self._defaults = [False] * len(self.labels or [])
        loc = self.sym.get("location") or {}
        uri = loc.get("uri", "")
        if not uri.startswith("file://") or not self.labels:
            return self._defaults
        path = uri[len("file://"):]
        try:
            with open(path, encoding="utf-8") as fh:
                text = "\n".join(fh.read().split("\n")[loc["position"]["line"]:])
        except OSError:
            return self._defaults
        m = re.search(re.escape(self.base) + r"\s*[?!]?\s*(<[^>]*>)?\s*\(", text)
        if not m:
            return self._defaults
        i, depth, cur, params = m.end(), 1, "", []
        while i < len(text) and depth:
            c = text[i]
            if c in "([{<":
                depth += 1
            elif c in ")]}>":
                depth -= 1
                if depth == 0:
                    break
            if c == "," and depth == 1:
                params.append(cur)
                cur = ""
            else:
                cur += c
            i += 1
        if cur.strip():
            params.append(cur)
        if len(params) == len(self.labels):
            self._defaults = [bool(re.search(r"(?<![=!<>])=(?!=)", p)) for p in params]
        return self._defaults


class SymbolIndex:
    def __init__(self, graph_files):
        self.types = set()                 # path tuples
        self.by_precise = {}               # precise id -> path tuple (types)
        self.members = defaultdict(list)   # parent path tuple -> [Member]
        self.by_base = defaultdict(list)   # base name -> [Member]
        self.type_by_last = defaultdict(list)
        self.labels = set()
        syms = []
        for f in graph_files:
            with open(f, encoding="utf-8") as fh:
                g = json.load(fh)
            syms.extend(g["symbols"])
        for s in syms:
            path = tuple(s["pathComponents"])
            if s["kind"]["identifier"] in TYPE_KINDS:
                self.types.add(path)
                self.by_precise[s["identifier"]["precise"]] = path
                self.type_by_last[path[-1]].append(path)
        for s in syms:
            path = tuple(s["pathComponents"])
            if s["kind"]["identifier"] in TYPE_KINDS or len(path) < 2:
                if len(path) == 1 and s["kind"]["identifier"] not in TYPE_KINDS:
                    m = Member(s, ())  # a global function or variable
                    self.members[()].append(m)
                    self.by_base[m.base].append(m)
                continue
            m = Member(s, path[:-1])
            self.members[path[:-1]].append(m)
            self.by_base[m.base].append(m)
            for lab in m.labels or []:
                if lab != "_":
                    self.labels.add(lab)


STDLIB_TYPES = {
    "String", "Substring", "Character", "Int", "Int8", "Int16", "Int32", "Int64", "UInt", "UInt8",
    "UInt16", "UInt32", "UInt64", "Double", "Float", "Bool", "Void", "Never", "Error", "Any",
    "AnyObject", "Optional", "Array", "Dictionary", "Set", "Result", "Date", "URL", "URLRequest",
    "URLResponse", "HTTPURLResponse", "Data", "UUID", "TimeInterval", "Duration", "Decimal",
    "AsyncStream", "AsyncThrowingStream", "Sendable", "Codable", "Hashable", "Equatable", "Self",
    "Locale", "JSONEncoder", "JSONDecoder", "URLSession", "Task",
}
MODULES = {"Gatehouse", "GatehouseAPI"}
KEYWORDS = {"true", "false", "nil", "async", "throws", "async throws", "self", "Self", "let", "var",
            "func", "init", "some", "any", "await", "try"}
# Words written in backticks in a Gatehouse column that are not Swift names at all.
NOT_SYMBOLS = {"http", "https"}
# Standard names that look like test ids ("P-256" is the elliptic curve).
NOT_TEST_IDS = {"P-256", "P-384", "P-521", "SHA-1", "SHA-256", "SHA-384", "SHA-512", "UTF-8",
                "UTF-16", "UTF-32", "AES-128", "AES-256", "RFC-6749", "ISO-8601"}


def match_labels(written, ellipsis, member):
    """Do the written argument labels call this overload (omitting defaulted parameters)?"""
    labels = member.labels
    if labels is None:
        return False
    defaults = member.defaults()

    def go(i, j):
        if i == len(written):
            return ellipsis or all(defaults[j:])
        if j == len(labels):
            return False
        if written[i] == labels[j] and go(i + 1, j + 1):
            return True
        return defaults[j] and go(i, j + 1)

    return go(0, 0)


# --------------------------------------------------------------------------------------------
# Parsing a backticked name

def split_top(text, sep):
    out, depth, cur = [], 0, ""
    for c in text:
        if c in "([<":
            depth += 1
        elif c in ")]>":
            depth -= 1
        if c == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += c
    out.append(cur)
    return out


def parse_chain(text):
    """'AuthClient.currentUser?.email' -> [('AuthClient', None), ('currentUser', None), ('email', None)];
    args, when present, are the raw text between the parentheses. None if it is not a chain."""
    comps = []
    for part in split_top(text, "."):
        part = part.strip().rstrip("?!")
        m = re.fullmatch(r"([A-Za-z_]\w*)\s*(?:\((.*)\))?[?!]?", part, re.S)
        if not m:
            return None
        comps.append((m.group(1), m.group(2)))
    return comps


def parse_args(args):
    """Argument text -> (labels, ellipsis, values, signature_form)."""
    args = args.strip()
    if not args:
        return [], False, [], True
    ellipsis = False
    if args.endswith("…"):
        ellipsis = True
        args = args[:-1].strip()
    if args == "":
        return [], True, [], True
    # signature form: 'email:password:' or '_:for:'
    if re.fullmatch(r"(?:[A-Za-z_]\w*:)+", args.replace(" ", "")):
        return args.replace(" ", "").split(":")[:-1], ellipsis, [], True
    labels, values = [], []
    for a in split_top(args, ","):
        a = a.strip()
        if not a:
            continue
        if a == "…":
            ellipsis = True
            continue
        m = re.fullmatch(r"([A-Za-z_]\w*)\s*:\s*(.*)", a, re.S)
        if m and not m.group(2).startswith(":"):
            labels.append(m.group(1))
            values.append(m.group(2))
        else:
            labels.append("_")
            values.append(a)
    return labels, ellipsis, values, False


class Resolver:
    def __init__(self, index, scan, other_decls, ref_items, ref_words):
        self.ix = index
        self.scan = scan
        self.other = other_decls
        self.ref_items = ref_items
        self.ref_words = ref_words

    # -- helpers -------------------------------------------------------------------------
    def types_named(self, name):
        if (name,) in self.ix.types:
            return [(name,)]
        return list(self.ix.type_by_last.get(name, []))

    def is_type_word(self, word):
        return word in STDLIB_TYPES or word in MODULES or bool(self.types_named(word))

    def check_type_words(self, text, errors):
        for w in re.findall(r"\b[A-Z]\w*", text):
            if not self.is_type_word(w):
                errors.append("no SDK type `%s`" % w)

    def check_values(self, values, errors):
        """Values inside a call: `.member` references and type names are checked, the rest
        (placeholders like `error`, literals) are not."""
        for v in values:
            for alt in v.split("/"):
                alt = alt.strip()
                if not alt or alt == "…":
                    continue
                if alt.startswith("."):
                    self.resolve(alt, errors, strict_labels=False)
                elif re.match(r"[A-Z]", alt):
                    self.check_type_words(alt, errors)

    def members_on(self, types, name):
        found = []
        for t in types:
            found += [m for m in self.ix.members.get(t, []) if m.base == name]
        return found

    def pick(self, cands, args, errors, where, strict_labels=True):
        """Narrow members by the written arguments; returns the ones that fit."""
        if args is None:
            return cands
        labels, ellipsis, values, sigform = parse_args(args)
        self.check_values(values, errors)
        if not sigform and not strict_labels:
            return cands
        # a signature (`logIn(email:password:)`) or a call (`logOut(scope: .global)`): the labels
        # must fit an overload, parameters with a default value may be left out
        fit = [m for m in cands if m.labels is not None and match_labels(labels, ellipsis, m)]
        if not fit:
            shown = sorted({m.base + "(" + "".join(l + ":" for l in m.labels) + ")"
                            for m in cands if m.labels is not None})
            errors.append("%s: no overload takes (%s)%s" % (
                where, "".join(l + ":" for l in labels) + ("…" if ellipsis else ""),
                "; it has " + ", ".join(shown) if shown else ""))
        return fit

    def result_types(self, members):
        out = []
        for m in members:
            tid = m.result_type_id()
            if tid in self.ix.by_precise:
                out.append(self.ix.by_precise[tid])
            else:
                return None  # not an SDK type: what follows cannot be checked
        return out or None

    # -- the check -------------------------------------------------------------------------
    def resolve(self, item, errors, strict_labels=True):
        text = item.strip().replace("...", "…")
        if "->" in text:
            text, ret = [x.strip() for x in text.split("->", 1)]
            self.check_type_words(ret, errors)
        # 'name: Type' or 'label: value' or 'label:'
        m = re.fullmatch(r"([A-Za-z_]\w*)\s*:\s*(.*)", text, re.S)
        if m and "(" not in m.group(1):
            name, rest = m.group(1), m.group(2).strip()
            if name not in self.ix.labels and name not in self.ix.by_base:
                errors.append("no SDK member or argument label `%s`" % name)
            self.check_type_words(rest, errors)
            return
        leading_dot = text.startswith(".")
        comps = parse_chain(text[1:] if leading_dot else text)
        if comps is None:
            errors.append("cannot read `%s` as a Swift name" % item)
            return
        if leading_dot:
            self.walk(comps, 0, None, errors, strict_labels)
            return
        first, args = comps[0]
        if first in MODULES:
            if len(comps) == 1:
                return
            comps = comps[1:]
            first, args = comps[0]
        if re.match(r"[A-Z]", first):
            types = self.types_named(first)
            if not types:
                if first not in STDLIB_TYPES:
                    errors.append("no SDK type `%s`" % first)
                return
            i = 1
            while i < len(comps) and args is None and comps[i][1] is None:
                deeper = [t + (comps[i][0],) for t in types if t + (comps[i][0],) in self.ix.types]
                if not deeper:
                    break
                types = deeper
                i += 1
            if args is not None:  # Type(args): an initializer
                inits = self.members_on(types, "init")
                if not inits:
                    errors.append("`%s` has no initializer" % first)
                    return
                if not self.pick(inits, args, errors, "`%s.init`" % first, strict_labels):
                    return
            self.walk(comps, i, types, errors, strict_labels)
            return
        # lower case first: a member of some SDK type, or a value named after its type
        # (authClient.x, profile.x); either reading will do.
        tries = [(0, None)]
        if len(comps) > 1 and args is None:
            word = first[0].upper() + first[1:]
            as_value = [t for t in self.ix.types if t[-1] == word or t[-1].endswith(word)]
            if as_value:
                tries.append((1, as_value))
        results = []
        for start, types in tries:
            errs = []
            verified = self.walk(comps, start, types, errs, strict_labels)
            if not errs and verified:
                return
            results.append((errs, verified))
        if any(not errs for errs, _ in results):
            return  # a reading that holds as far as the SDK's types go
        errors.extend(results[-1][0])  # the "value named after its type" reading, when there is one

    def walk(self, comps, i, cur, errors, strict_labels):
        """Look comps[i:] up one after the other, starting on the types in cur (None: on any type).
        Returns False when it stopped early at a type that is not the SDK's (nothing to check)."""
        while i < len(comps):
            name, args = comps[i]
            if cur is None:
                cands = list(self.ix.by_base.get(name, []))
                where = "`%s`" % name
                if not cands:
                    errors.append("no SDK type has a member `%s`" % name)
                    return True
            else:
                cands = self.members_on(cur, name)
                shown = ", ".join(dict.fromkeys("`%s`" % ".".join(t) for t in cur))
                where = "`%s.%s`" % (".".join(cur[0]), name)
                if not cands:
                    errors.append("%s has no member `%s`" % (shown, name))
                    return True
            if args is None and i + 1 < len(comps):
                # `x.y`: x must be a property or case here, not a function left uncalled
                cands = [m for m in cands if m.labels is None]
                if not cands:
                    errors.append("%s is a function: `%s.…` does not follow from it" % (where, name))
                    return True
            fit = self.pick(cands, args, errors, where, strict_labels)
            if not fit:
                return True
            i += 1
            if i < len(comps):
                cur = self.result_types(fit)
                if cur is None:
                    return False  # e.g. a String property: what follows is not the SDK's
        return True

    def check(self, item, strict):
        """Returns ('ok'|'problem'|'note'|'skip', detail)."""
        t = item.strip()
        reason = self.shape_skip(t, strict)
        if reason:
            return "skip", reason
        errors = []
        self.resolve(t, errors)
        if not errors:
            return "ok", ""
        # Fallbacks for names that are not the SDK's at all, or that Linux cannot see.
        words = re.findall(r"[A-Za-z_]\w*", t)
        if t in self.ref_items or (re.fullmatch(r"[A-Za-z_]\w*:?", t) and t.rstrip(":") in self.ref_words):
            return "skip", "a reference SDK's name (it appears in a reference column)"
        first_type = next((w for w in words if re.match(r"[A-Z]", w) and not self.is_type_word(w)), None)
        if first_type and first_type in self.scan.apple_types:
            f, ln, cond = self.scan.apple_types[first_type]
            members = [c[0] for c in (parse_chain(t.lstrip(".").split("->")[0]) or [])
                       if c[0] != first_type and not self.is_type_word(c[0])]
            missing = [m for m in members if m not in self.scan.apple_members]
            if not missing:
                return "note", "`%s` is Apple-only (%s:%d, `#if %s`): checked against the source only" % (
                    t, rel(f), ln, cond)
            return "problem", "`%s` is Apple-only (%s:%d) and its Apple-only source declares no `%s`" % (
                first_type, rel(f), ln, "`, `".join(missing))
        if not strict and first_type and first_type in self.other:
            f, ln = self.other[first_type]
            return "skip", "not an SDK type: declared in %s:%d" % (rel(f), ln)
        names = [w for w in words if not self.is_type_word(w)]
        if names and names[0] in self.scan.apple_members and names[0] not in self.ix.by_base:
            # e.g. `signInWithProvider(_:…)`: a member declared only under an Apple-only #if
            return "note", "`%s` is declared only in Apple-only code: checked against the source only" % t
        if len(names) == 1 and names[0] in self.scan.apple_words and names[0] not in self.ix.by_base:
            # e.g. `.biometryCurrentSet`: an Apple framework's name, used only in Apple-only code
            f, ln = self.scan.apple_words[names[0]]
            return "note", "`%s` appears only in Apple-only code (%s:%d): not checked on Linux" % (t, rel(f), ln)
        return "problem", "; ".join(dict.fromkeys(errors))

    def shape_skip(self, t, strict):
        """Backticked text that is clearly not a Swift SDK name."""
        if re.match(r"(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\b", t):
            return "HTTP route"
        if t.startswith("/") or t.startswith("?") or ("?" in t and "=" in t):
            return "URL path or query"
        if "/" in t and "(" not in t and "." not in t.split("/")[0]:
            return "file path"
        if re.search(r"\.(swift|md|txt|json|yml|yaml)$", t) or re.search(r"\w_…", t):
            return "file name"
        if t.startswith("@"):
            return "attribute"
        if t.startswith("[") or t.startswith("("):
            return "Objective-C message or tuple (reference SDK)"
        if t.startswith("-") or " --" in t:
            return "command-line flag or command"
        if re.match(r"\d", t):
            return "number"
        if re.search(r"[a-z0-9]_[a-z]", t) and not re.search(r"[(.]", t.split("_")[0]):
            return "snake_case wire, JSON or form name"
        if re.fullmatch(r"[A-Za-z]+(-[A-Za-z]+)+", t):
            return "HTTP header or hyphenated name"
        if t in KEYWORDS:
            return "Swift keyword or literal"
        if " " in t and not re.search(r"[(:.]", t):
            return "phrase or command, not a name"
        if re.fullmatch(r"(?:[a-z]\w*:){2,}", t) or re.fullmatch(r"\w+ \w+:.*", t):
            return "Objective-C selector (reference SDK)"
        if t in NOT_SYMBOLS:
            return "URL scheme"
        if not strict and re.fullmatch(r"[a-z]+", t):
            return "single lower-case word in prose or notes: ambiguous with wire values (amr, pin, nonce…)"
        return None


# --------------------------------------------------------------------------------------------
# seed-coverage.md

def code_spans(text):
    return [(m.start(), m.group(1)) for m in re.finditer(r"`([^`]+)`", text)]


def split_cells(line):
    """Table cells, not splitting inside backticks."""
    cells, cur, in_code = [], "", False
    body = line.strip()
    if body.startswith("|"):
        body = body[1:]
    if body.endswith("|"):
        body = body[:-1]
    for c in body:
        if c == "`":
            in_code = not in_code
        if c == "|" and not in_code:
            cells.append(cur)
            cur = ""
        else:
            cur += c
    cells.append(cur)
    return [c.strip() for c in cells]


GATEHOUSE_COLUMNS = {"Gatehouse SDK", "Gatehouse equivalent"}
LOOSE_COLUMNS = {"Notes", "SDK test", "Server test"}
SKIP_COLUMNS = {"Route": "server route column", "Id": "test id column", "Test": "test title column",
                "File": "test file column"}


def seed_items(lines):
    """Yield (line_no, item, role, header) for every backticked item; role is 'strict', 'loose',
    or a skip reason."""
    header = None
    for no, line in enumerate(lines, 1):
        if line.lstrip().startswith("|"):
            cells = split_cells(line)
            if all(re.fullmatch(r":?-+:?", c) for c in cells if c):
                continue
            nxt = lines[no] if no < len(lines) else ""
            if header is None and re.match(r"\s*\|\s*:?-", nxt):
                header = cells
                continue
            for ci, cell in enumerate(cells):
                h = header[ci] if header and ci < len(header) else ""
                if h in GATEHOUSE_COLUMNS:
                    role = "strict"
                elif h in LOOSE_COLUMNS:
                    role = "loose"
                elif h in SKIP_COLUMNS:
                    role = SKIP_COLUMNS[h]
                else:
                    role = "reference SDK column (%s)" % h
                for _, item in code_spans(cell):
                    yield no, item, role, h
        else:
            header = None
            for _, item in code_spans(line):
                yield no, item, "loose", ""


def check_seed_symbols(doc_path, resolver_factory):
    with open(doc_path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    items = list(seed_items(lines))
    ref_items = {it for _, it, role, _ in items if role.startswith("reference SDK column")}
    ref_words = set()
    for it in ref_items:
        ref_words.update(re.findall(r"[A-Za-z_]\w*", it))
    resolver = resolver_factory(ref_items, ref_words)
    checked = 0
    for no, item, role, h in items:
        if role not in ("strict", "loose"):
            SKIPPED.append((rel(doc_path), no, item, role))
            continue
        verdict, detail = resolver.check(item, role == "strict")
        if verdict == "skip":
            SKIPPED.append((rel(doc_path), no, item, detail))
            continue
        checked += 1
        if verdict == "problem":
            problem(doc_path, no, "`%s`%s: %s" % (item, " (column \"%s\")" % h if h else "", detail))
        elif verdict == "note":
            note(doc_path, no, detail)
    return checked


# -- test ids ----------------------------------------------------------------------------------

def test_titles(test_dirs):
    """Display names of @Test and @Suite, with where they are."""
    tests, suites = defaultdict(list), defaultdict(list)
    lit = r'"((?:[^"\\\n]|\\.)*)"'
    for d in test_dirs:
        for f in sorted(glob.glob(os.path.join(d, "**", "*.swift"), recursive=True)):
            with open(f, encoding="utf-8") as fh:
                text = fh.read()
            for m in re.finditer(r"@(Test|Suite)\s*\(\s*" + lit, text):
                title = re.sub(r"\\(.)", r"\1", m.group(2))
                line = text.count("\n", 0, m.start()) + 1
                (tests if m.group(1) == "Test" else suites)[title].append((f, line))
    return tests, suites


ID_RE = re.compile(
    r"\b([A-Z]{1,5})-(\d+)"                          # SDK-1
    r"(?:\s*…\s*(?:([A-Z]{1,5})-)?(\d+))?"            # …6, …LT-4
    r"((?:\s*/\s*\d+\b(?!-))*)"                        # SDK-4/5
    r"((?:,\s*\d+\b(?![-\d]))*)"                       # SDK-1, 2, 4, 5
)


def id_mentions(line):
    out = []
    for m in ID_RE.finditer(line):
        prefix, first = m.group(1), int(m.group(2))
        if "%s-%d" % (prefix, first) in NOT_TEST_IDS:
            continue
        ids = [first]
        if m.group(4):
            if m.group(3) and m.group(3) != prefix:  # "A-1…B-3": not a range, two ids
                out.append(("%s-%s" % (m.group(3), m.group(4)), m.group(0)))
            else:  # "SDK-1…6", "LT-1…LT-4"
                ids += list(range(first + 1, int(m.group(4)) + 1))
        ids += [int(x) for x in re.findall(r"\d+", m.group(5) or "")]
        ids += [int(x) for x in re.findall(r"\d+", m.group(6) or "")]
        out += [("%s-%d" % (prefix, n), m.group(0)) for n in ids]
    return out


def check_test_ids(doc_path, test_dirs):
    with open(doc_path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    tests, suites = test_titles(test_dirs)
    defs = {}  # id -> (line, title, expected file or None)
    heading_path = None
    header = None
    in_ids = False
    for no, line in enumerate(lines, 1):
        if line.startswith("## "):
            in_ids = line.strip() == "## Test ids"
        if line.startswith("#"):
            paths = [p for _, p in code_spans(line) if p.startswith("Tests/") or "/Tests/" in p]
            heading_path = paths[0] if paths else None
            header = None
            continue
        if not in_ids or not line.lstrip().startswith("|"):
            if not line.lstrip().startswith("|"):
                header = None
            continue
        cells = split_cells(line)
        if header is None:
            header = cells
            continue
        if not re.fullmatch(r"[A-Z]{1,5}-\d+", cells[0]):
            continue
        row = dict(zip(header, cells))
        title = row.get("Test", cells[-1])
        expected = heading_path
        if row.get("File"):
            base = heading_path if heading_path and heading_path.endswith("/") else \
                os.path.dirname(heading_path or "Tests/") + "/"
            expected = base + row["File"]
        if cells[0] in defs:
            problem(doc_path, no, "test id %s is defined twice (also line %d)" % (cells[0], defs[cells[0]][0]))
        defs[cells[0]] = (no, title, expected)

    # inline definitions: **CORE-1** = `Tests/…/PolicyTests.swift`, "the @Test name" (may wrap)
    text = "\n".join(lines)
    for m in re.finditer(r"\*\*([A-Z]{1,5}-\d+)\*\*\s*=\s*`([^`]+)`,\s*\"([^\"]+)\"", text):
        no = text.count("\n", 0, m.start()) + 1
        if m.group(1) in defs:
            problem(doc_path, no, "test id %s is defined twice (also line %d)" % (m.group(1), defs[m.group(1)][0]))
        defs[m.group(1)] = (no, m.group(3), m.group(2))

    for tid, (no, title, expected) in sorted(defs.items()):
        check_one_test(doc_path, tid, no, title, expected, tests, suites)

    cited = set()
    for no, line in enumerate(lines, 1):
        for tid, written in id_mentions(line):
            cited.add(tid)
            if tid not in defs:
                problem(doc_path, no, "test id %s (in \"%s\") is not defined in the Test ids tables, so it names "
                        "no test" % (tid, written))
    return len(cited | set(defs))


def check_one_test(doc_path, tid, no, title, expected, tests, suites):
    annotations = []
    t = title.strip()
    # A test may carry its id in its own name ("U-1: the access token …"): then the doc's title is
    # the rest, and the id must be the same one.
    tests = dict(tests)
    for x, ws in list(tests.items()):
        m = re.match(r"([A-Z]{1,5}-\d+): (.*)$", x, re.S)
        if m and m.group(1) == tid:
            tests.setdefault(m.group(2), ws)
    while t not in tests:
        m = re.search(r"\s*\(((?:[^()]|\([^()]*\))*)\)\s*$", t)
        if not m:
            break
        annotations.insert(0, m.group(1))
        t = t[:m.start()].rstrip()
    expected_file = expected
    wanted_suites = []
    for a in annotations:
        for f in re.findall(r"`([^`]+\.swift)`", a):
            expected_file = os.path.join(os.path.dirname(expected or "Tests/x"), f)
        wanted_suites += re.findall(r"suite \"([^\"]+)\"", a)
    if t not in tests:
        cands = [(x, w) for x, ws in tests.items() for w in ws]
        if expected_file and not expected_file.endswith("/"):
            local = [(x, w) for x, w in cands if rel(w[0]) == os.path.normpath(expected_file)]
            cands = local or cands
        prefix = [(x, w) for x, w in cands if x.startswith(t) or t.startswith(x)]
        close = prefix or sorted(cands, key=lambda c: -difflib.SequenceMatcher(None, t, c[0]).ratio())[:1]
        hint = ""
        if close:
            x, (f, ln) = close[0]
            hint = "; closest: %s:%d @Test(\"%s\")" % (rel(f), ln, x)
        problem(doc_path, no, "%s: no @Test is named \"%s\"%s" % (tid, t, hint))
        return
    where = tests[t]
    if expected_file and not expected_file.endswith("/"):
        if not any(rel(f) == os.path.normpath(expected_file) for f, _ in where):
            problem(doc_path, no, "%s: @Test(\"%s\") is in %s, not in %s" % (
                tid, t, ", ".join(sorted({rel(f) for f, _ in where})), expected_file))
    for s in wanted_suites:
        files = {f for f, _ in where}
        if not any(sf in files for sf, _ in suites.get(s, [])):
            problem(doc_path, no, "%s: no @Suite(\"%s\") in %s" % (tid, s, ", ".join(sorted(rel(f) for f in files))))


# --------------------------------------------------------------------------------------------
# DocC

def count_links(catalog, source_dirs):
    n = 0
    for f in sorted(glob.glob(os.path.join(catalog, "**", "*.md"), recursive=True)):
        fence = False
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                if line.lstrip().startswith("```"):
                    fence = not fence
                    continue
                if not fence:
                    n += len(re.findall(r"``[^`]+``", line)) + len(re.findall(r"<doc:[^>]+>", line))
    for d in source_dirs:
        for f in sorted(glob.glob(os.path.join(d, "**", "*.swift"), recursive=True)):
            with open(f, encoding="utf-8") as fh:
                for line in fh:
                    if line.lstrip().startswith("///"):
                        n += len(re.findall(r"``[^`]+``", line)) + len(re.findall(r"<doc:[^>]+>", line))
    return n


def link_at(path, line, col):
    try:
        with open(path, encoding="utf-8") as fh:
            text = fh.read().split("\n")[line - 1]
    except (OSError, IndexError):
        return None
    for m in re.finditer(r"``([^`]+)``", text):
        if m.start() <= col - 1 <= m.end():
            return m.group(1)
    return None


SEEN_DIAGNOSTICS = set()


def run_docc(docc, catalog, graph_dir, work, name, scan, index):
    out_dir = os.path.join(work, "docc-out-" + name)
    diag = os.path.join(work, "docc-diagnostics-" + name + ".json")
    if os.path.exists(diag):
        os.remove(diag)
    cmd = [docc, "convert"] + ([catalog] if catalog else []) + [
        "--additional-symbol-graph-dir", graph_dir, "--output-dir", out_dir,
        "--diagnostics-file", diag, "--warnings-as-errors",
        "--fallback-display-name", name, "--fallback-bundle-identifier", "org.gatehouse." + name]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if not os.path.exists(diag):
        problem(catalog or graph_dir, 0, "docc convert failed (exit %d) without diagnostics:\n%s" % (
            proc.returncode, proc.stdout[-3000:]))
        return
    with open(diag, encoding="utf-8") as fh:
        diags = json.load(fh).get("diagnostics", [])
    if proc.returncode != 0 and not diags:
        problem(catalog or graph_dir, 0, "docc convert exited %d:\n%s" % (proc.returncode, proc.stdout[-3000:]))
    for d in diags:
        src = d.get("source") or ""
        path = src[len("file://"):] if src.startswith("file://") else (src or catalog or graph_dir)
        rng = d.get("range") or {}
        line = (rng.get("start") or {}).get("line", 0)
        col = (rng.get("start") or {}).get("column", 0)
        summary = d.get("summary", "")
        fixes = [s["summary"] for s in d.get("solutions", []) if s.get("summary")]
        if (path, line, col, summary) in SEEN_DIAGNOSTICS:
            continue  # a GatehouseAPI doc comment, seen by both runs
        SEEN_DIAGNOSTICS.add((path, line, col, summary))
        link = link_at(path, line, col) if line else None
        if link and "doesn't exist" in summary:
            first = link.split("/")[0]
            if first in scan.apple_types and (first,) not in index.types:
                f, ln, cond = scan.apple_types[first]
                missing = [split_name(c)[0] for c in link.split("/")[1:]
                           if split_name(c)[0] not in scan.apple_members]
                if not missing:
                    note(path, line, "``%s`` is Apple-only (%s:%d, `#if %s`): not in the Linux symbol graph, "
                         "checked against the source only" % (link, rel(f), ln, cond))
                    continue
        msg = ("``%s``: " % link if link else "") + summary
        if fixes:
            msg += " (docc suggests: %s)" % "; ".join(fixes[:3])
        problem(path, line, "[docc %s] %s" % (name, msg))


# --------------------------------------------------------------------------------------------

def main():
    global ROOT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", required=True)
    ap.add_argument("--graphs", help="directory the compiler wrote the SDK's symbol graphs to")
    ap.add_argument("--work", help="scratch directory for docc output")
    ap.add_argument("--docc", default="docc")
    ap.add_argument("--build-failed", action="store_true")
    ap.add_argument("--verbose", "-v", action="store_true")
    a = ap.parse_args()
    ROOT = os.path.abspath(a.root)

    sdk = os.path.join(ROOT, "GatehouseSDK")
    catalog = os.path.join(sdk, "Sources", "Gatehouse", "Gatehouse.docc")
    sdk_sources = [os.path.join(sdk, "Sources", "Gatehouse"), os.path.join(sdk, "Sources", "GatehouseAPI")]
    seed = os.path.join(ROOT, "docs", "seed-coverage.md")
    test_dirs = [os.path.join(ROOT, "Tests"), os.path.join(sdk, "Tests")]

    n_links = count_links(catalog, sdk_sources)
    n_symbols = 0
    if a.build_failed:
        problem(os.path.join(sdk, "Package.swift"), 0,
                "the SDK did not build (errors above): DocC links and seed-coverage symbols were NOT checked")
        n_links = 0
    else:
        scan = SourceScan(sdk_sources)
        graphs = sorted(glob.glob(os.path.join(a.graphs, "*.symbols.json")))
        by_module = defaultdict(list)
        for g in graphs:
            by_module[os.path.basename(g).split(".symbols.json")[0].split("@")[0]].append(g)
        for mod in ("Gatehouse", "GatehouseAPI"):
            if not by_module.get(mod):
                problem(a.graphs, 0, "no symbol graph for %s" % mod)
        if by_module.get("Gatehouse") and by_module.get("GatehouseAPI"):
            index = SymbolIndex(by_module["Gatehouse"])
            reexported = sum(1 for t in index.by_precise if t.startswith("s:12GatehouseAPI"))
            if reexported == 0:
                problem(a.graphs, 0, "the Gatehouse symbol graph holds no GatehouseAPI symbol: links to "
                        "re-exported types (User, ErrorCode, …) cannot resolve")
            for mod, cat in (("Gatehouse", catalog), ("GatehouseAPI", None)):
                d = os.path.join(a.work, "graphs-" + mod)
                os.makedirs(d, exist_ok=True)
                for old in glob.glob(os.path.join(d, "*.json")):
                    os.remove(old)
                for g in by_module[mod]:
                    with open(g, "rb") as src, open(os.path.join(d, os.path.basename(g)), "wb") as dst:
                        dst.write(src.read())
                run_docc(a.docc, cat, d, a.work, mod, scan, index)
            other = project_declarations([os.path.join(ROOT, "Sources"), os.path.join(ROOT, "Tests"),
                                          os.path.join(sdk, "Tests")])
            other = {k: v for k, v in other.items() if not index.type_by_last.get(k)}
            n_symbols = check_seed_symbols(
                seed, lambda ri, rw: Resolver(index, scan, other, ri, rw))
    n_ids = check_test_ids(seed, test_dirs)

    for path, line, msg in sorted(PROBLEMS, key=lambda p: (p[0], p[1])):
        print("%s:%d: error: %s" % (path, line, msg))
    for path, line, msg in sorted(NOTES, key=lambda p: (p[0], p[1])):
        print("%s:%d: note: %s" % (path, line, msg))
    if a.verbose:
        for path, line, item, why in SKIPPED:
            print("%s:%d: skipped `%s`: %s" % (path, line, item, why))
    print("check-docs: %d links, %d seed-coverage symbols, %d test ids checked, %d problems"
          " (%d Apple-only names checked against the source only, %d backticked items skipped as not SDK names)"
          % (n_links, n_symbols, n_ids, len(PROBLEMS), len(NOTES), len(SKIPPED)))
    return 1 if PROBLEMS else 0


if __name__ == "__main__":
    sys.exit(main())
