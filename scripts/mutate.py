#!/usr/bin/python3
"""Mutation testing of r3check's own code (docs/mutation.md).

Generates source mutants of src/r3/{case,model,sut,check,minimize}, src/cli,
the fuzz targets' checking code and the GPU path's host side (plan, decode), applies one at a time to a scratch copy of
the repository (.mutate/work, one Meson build dir configured once with
-Dgpu=disabled), rebuilds incrementally, runs the CI suites (unit, e2e,
properties, fuzz-replay) and `r3check verify --cases 2000` until one fails, and
records killed / survived / timeout / build-error in .mutate/results.json.

    scripts/mutate.py --list                      # mutants, counts per folder
    scripts/mutate.py --sample 80 --seed 1 --max-minutes 60
    scripts/mutate.py --report                    # Markdown table by folder
    scripts/mutate.py --ci                        # the fixed CI sample; exit 1 if one survives

Python 3 standard library only.
"""

import argparse
import ast
import base64
import bisect
import collections
import hashlib
import io
import json
import os
import pickle
import random
import re
import signal
import subprocess
import sys
import tarfile
import threading
import time
import tokenize as pytokenize

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# R3_MUTATE_STATE: another state folder (its own scratch copy and results),
# so that several people can try mutants of one checkout at once.
STATE = os.path.abspath(os.environ.get('R3_MUTATE_STATE') or os.path.join(ROOT, '.mutate'))
WORK = os.path.join(STATE, 'work')  # the scratch copy (--in-place: the checkout itself)
BUILD = os.path.join(WORK, 'build')
JOURNAL = os.path.join(STATE, 'applied.json')  # --in-place: the file being mutated
RESULTS = os.path.join(STATE, 'results.json')
CI_RESULTS = os.path.join(STATE, 'ci-results.json')
LOGS = os.path.join(STATE, 'logs')
EQUIVALENTS = os.path.join(ROOT, 'scripts', 'mutation_equivalents.txt')
CI_SAMPLE = os.path.join(ROOT, 'scripts', 'mutation_ci_sample.txt')
COVERAGE = os.path.join(STATE, 'coverage.json')  # which test executes which line
PY_COVERAGE = os.path.join(STATE, 'py-coverage.json')  # the same for the Python sources
FILE_LIST = None  # --file-list: the tree's files when there is no git checkout

# Folders (or single files) that are mutated; the report groups by these.
SCOPES = ['src/r3/case', 'src/r3/model', 'src/r3/sut', 'src/r3/check', 'src/r3/minimize',
          'src/cli', 'fuzz/fuzz_sut.cc', 'fuzz/layout_target.cc',
          # The GPU path's host side: built and tested by every build.
          'src/r3/gpu/plan.cc', 'src/r3/gpu/decode.cc', 'src/r3/gpu/gpu.cc',
          # Issue 23: the engine protocol client, the verify sampler, the
          # fuzzers' case mutator.
          'src/r3/engine', 'src/r3/sample', 'fuzz/case_mutator.cc',
          # The Python that decides outcomes (ast mutator below; no rebuild).
          'engines/runtime/r3runtime', 'engines/vllm/r3_vllm', 'engines/vllm/r3_adapter.py',
          'engines/sglang/r3_sglang', 'engines/vllm-ascend/r3_ascend',
          'scripts/fuzz_report.py']
PY_SCOPES = {'engines/runtime/r3runtime', 'engines/vllm/r3_vllm', 'engines/vllm/r3_adapter.py',
             'engines/sglang/r3_sglang', 'engines/vllm-ascend/r3_ascend',
             'scripts/fuzz_report.py'}
# The tests a Python mutant runs (Meson test names; each may be split into
# parts, TEST_PARTS). No ninja output depends on a .py file, so this static
# map stands in for the source-to-test map; the Python coverage map
# (--collect-py-coverage) narrows it to the parts that execute the line.
ENGINE_PY_TESTS = ['engine_adapter_test', 'engine_trust_test', 'sweep_e2e_test',
                   'fork_server_e2e_test', 'engine_e2e_test', 'engine_multinode_test']
PY_TESTS = {
    'engines/runtime/r3runtime': ['engine_runtime_test'] + ENGINE_PY_TESTS + [
        'sglang_adapter_test', 'vllm_ascend_adapter_test'],
    # vllm-ascend's adapter loads vLLM's capturer through engines/vllm's binding
    'engines/vllm/r3_vllm': ENGINE_PY_TESTS + ['vllm_ascend_adapter_test'],
    'engines/sglang/r3_sglang': ['sglang_adapter_test'],
    'engines/vllm-ascend/r3_ascend': ['vllm_ascend_adapter_test'],
    'engines/vllm/r3_adapter.py': ENGINE_PY_TESTS,
    'scripts/fuzz_report.py': ['fuzz_report_test', 'overnight_driver_test'],
}
# Slow tests split into parts (issue 23, item 3), each run on its own, fastest
# first, stopping at the first that fails: a mutant the fake-adapter part of
# engine_e2e_test kills never waits for the real-torch part. A part is the
# test's command plus these arguments; `--no-parts` runs the whole tests.
_UT = ['-f']  # unittest: stop at the first failure
TEST_PARTS = {
    'engine_e2e_test': [
        # exec: adapters in plain Python (tests/engine/misbehaving_adapter.py), no torch
        ('fake', ['--gtest_filter=*MisbehavingAdapterTest.*:EngineCrashTest.*:'
                  'EngineSizingTest.*:EngineFlagsTest.*:EngineSummaryTest.*']),
        # vllm:FIXTURE through engines/vllm with torch
        ('torch', ['--gtest_filter=EngineFixtureTest.*:*BrokenEngineTest.*'])],
    'engine_adapter_test': [(c, _UT + [c]) for c in (
        'HelloTest', 'SeededBugTest', 'DeviceCacheTest', 'RobustnessTest', 'MultiProcessTest',
        'FatalTest')] + [
        ('Post50874Test', _UT + ['Post50874Test.' + m for m in (
            'test_worked_examples', 'test_digits_beyond_one_byte_and_wide_dtypes',
            'test_buffer_is_cleared_between_captures',
            'test_coincidental_local_branch_captures_the_pad',
            'test_bad_layer_and_too_small_buffer_are_rank_errors',
            'test_mismatched_shards_hang_one_rank')]),
        # 70 s of the test's 107 (measured): a part of its own, so that it runs last
        ('Post50874Test.decode',
         _UT + ['Post50874Test.test_decode_shortcuts_agree_with_digit_by_digit_decoding'])],
    'engine_trust_test': [(c, _UT + [c]) for c in (
        'FaithfulStandInsTest', 'StandInGapTest', 'OldTorchTest', 'InterfacesTest', 'ProtocolHygieneTest',
        'ReplaySizingTest')],
    'sweep_e2e_test': [(c, _UT + [c]) for c in ('FolderSweep', 'RevisionSweep', 'BadInput')],
    # the adapter over the protocol first; r3check's front ends over it last
    'sglang_adapter_test': [(c, _UT + [c]) for c in ('AdapterTest', 'CliTest')],
    'vllm_ascend_adapter_test': [(c, _UT + [c]) for c in (
        'AdapterTest', 'RealCollectivesTest', 'CliTest')],
}
SLOW_TEST_S = 30.0  # a test (part) at least this slow in the baseline runs last
SUITES = ['unit', 'e2e', 'properties', 'fuzz-replay', 'engine']
VERIFY = 'verify-2000'  # the pseudo test `r3check verify --cases 2000`
# Macros never defined in the mutation build (-Dgpu=disabled): code under
# `#ifdef` of one of them is not compiled, so it is not mutated.
UNDEFINED_MACROS = {'R3CHECK_HAVE_GPU', '__CUDACC__'}

# Tests tried first for mutants of a folder (they fail fastest there); the
# rest follow in suite order. Tests that killed earlier mutants of the same
# file (results.json) go before both.
PREFERRED = {
    'src/r3/case': ['case_format_test', 'rows_test'],
    'src/r3/model': ['layout_test', 'sizing_test'],
    'src/r3/sut': ['sut_test', 'dispatch_plan_test', 'mutants_test'],
    'src/r3/check': ['invariants_test', 'run_case_test', 'report_test'],
    'src/r3/minimize': ['minimize_test'],
    'src/cli': ['cli_e2e_test', VERIFY, 'minimize_e2e_test'],
    'fuzz/fuzz_sut.cc': ['case_mutator_test'],
    'fuzz/layout_target.cc': ['replay_layout_seeds'],
    'src/r3/gpu/plan.cc': ['gpu_plan_decode_test'],
    'src/r3/gpu/decode.cc': ['gpu_plan_decode_test'],
    'src/r3/gpu/gpu.cc': ['gpu_plan_decode_test'],
    'src/r3/engine': ['engine_protocol_test'],
    'src/r3/sample': ['case_sampler_test'],
    'fuzz/case_mutator.cc': ['case_mutator_test'],
    'engines/runtime/r3runtime': ['engine_runtime_test'],
    'engines/sglang/r3_sglang': ['sglang_adapter_test'],
    'engines/vllm-ascend/r3_ascend': ['vllm_ascend_adapter_test'],
}
SUITE_ORDER = ['unit', VERIFY, 'e2e', 'properties', 'fuzz-replay']


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def sha(data):
    return hashlib.sha256(data).hexdigest()


# --------------------------------------------------------------------------
# A small C++ scanner.

class Tok:
    __slots__ = ('kind', 'text', 'start', 'end', 'line', 'col', 'wsb', 'wsa', 'tmpl')

    def __init__(self, kind, text, start, end, line, col):
        self.kind, self.text, self.start, self.end = kind, text, start, end
        self.line, self.col = line, col
        self.wsb = self.wsa = False
        self.tmpl = False

    def __repr__(self):
        return '%s:%r@%d:%d' % (self.kind, self.text, self.line, self.col)


PUNCTS = ['<<=', '>>=', '<=>', '->*', '...', '::', '->', '++', '--', '<<', '>>', '<=', '>=',
          '==', '!=', '&&', '||', '+=', '-=', '*=', '/=', '%=', '&=', '|=', '^=', '.*', '##']
IDENT_RE = re.compile(r'[A-Za-z_]\w*')
NUMBER_RE = re.compile(r"\.?\d(?:[eEpP][+-]|[\w.']|'(?=\w))*")
STRING_PREFIXES = {'u8', 'u', 'U', 'L', 'R', 'u8R', 'uR', 'UR', 'LR'}
INT_RE = re.compile(r"^(0[xX][0-9a-fA-F']+|0[bB][01']+|[0-9][0-9']*)([uUlLzZ]*)$")


def _skip_string(src, i, quote):
    """Index just past the literal that opens with src[i] == quote."""
    j = i + 1
    while j < len(src):
        c = src[j]
        if c == '\\':
            j += 2
            continue
        if c == quote or c == '\n':
            return j + 1
        j += 1
    return j


def tokenize(src):
    """Tokens of C++ source, without comments, literals' insides or preprocessor
    lines; code in `#ifdef` of UNDEFINED_MACROS is left out."""
    toks = []
    i, n = 0, len(src)
    line, line_start = 1, 0
    at_line_start = True
    cond_stack = []  # True: active branch
    active = True

    def advance_lines(a, b):
        nonlocal line, line_start
        k = src.count('\n', a, b)
        if k:
            line += k
            line_start = src.rfind('\n', a, b) + 1

    while i < n:
        c = src[i]
        if c == '\n':
            line += 1
            line_start = i + 1
            at_line_start = True
            i += 1
            continue
        if c in ' \t\r\f\v':
            i += 1
            continue
        if c == '/' and src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
            continue
        if c == '/' and src.startswith('/*', i):
            j = src.find('*/', i + 2)
            j = n if j < 0 else j + 2
            advance_lines(i, j)
            i = j
            continue
        if c == '#' and at_line_start:
            j = i
            while True:
                k = src.find('\n', j)
                if k < 0:
                    k = n
                    break
                if src[k - 1] == '\\':
                    j = k + 1
                    continue
                break
            directive = src[i + 1:k].split('//')[0].split()
            word = directive[0] if directive else ''
            arg = directive[1] if len(directive) > 1 else ''
            if word in ('if', 'ifdef', 'ifndef'):
                here = True
                if word == 'ifdef' and arg in UNDEFINED_MACROS:
                    here = False
                if word == 'ifndef' and arg in UNDEFINED_MACROS:
                    here = True
                cond_stack.append((active, here))
                active = active and here
            elif word in ('else', 'elif') and cond_stack:
                outer, here = cond_stack[-1]
                here = not here if word == 'else' else True
                cond_stack[-1] = (outer, here)
                active = outer and here
            elif word == 'endif' and cond_stack:
                active = cond_stack.pop()[0]
            advance_lines(i, k)
            i = k
            continue
        at_line_start = False
        col = i - line_start + 1
        m = IDENT_RE.match(src, i)
        if m:
            word = m.group(0)
            j = m.end()
            if word in STRING_PREFIXES and j < n and src[j] in '"\'':
                if word.endswith('R') and src[j] == '"':
                    k = src.find('(', j)
                    delim = src[j + 1:k]
                    e = src.find(')' + delim + '"', k)
                    e = n if e < 0 else e + len(delim) + 2
                else:
                    e = _skip_string(src, j, src[j])
                if active:
                    toks.append(Tok('str', src[i:e], i, e, line, col))
                advance_lines(i, e)
                i = e
                continue
            if active:
                toks.append(Tok('id', word, i, j, line, col))
            i = j
            continue
        if c.isdigit() or (c == '.' and i + 1 < n and src[i + 1].isdigit()):
            m = NUMBER_RE.match(src, i)
            if active:
                toks.append(Tok('num', m.group(0), i, m.end(), line, col))
            i = m.end()
            continue
        if c in '"\'':
            e = _skip_string(src, i, c)
            if active:
                toks.append(Tok('str', src[i:e], i, e, line, col))
            i = e
            continue
        for p in PUNCTS:
            if src.startswith(p, i):
                break
        else:
            p = c
        if active:
            toks.append(Tok('op', p, i, i + len(p), line, col))
        i += len(p)
    for t in toks:
        t.wsb = t.start == 0 or src[t.start - 1].isspace()
        t.wsa = t.end >= n or src[t.end].isspace()
    mark_templates(toks)
    return toks


TEMPLATE_STOP = {';', '{', '}', '||', '&&', '==', '!=', '<=', '>=', '?', '=', '+=', '-=', '<<',
                 'return', '|', '^', '%', '!'}


def mark_templates(toks):
    """Sets .tmpl on the angle brackets of template argument lists."""
    for i, t in enumerate(toks):
        if t.text != '<' or t.tmpl or i == 0:
            continue
        prev = toks[i - 1]
        if prev.text == 'operator':
            continue
        if prev.text != 'template' and (prev.kind != 'id' or (t.wsb and t.wsa)):
            continue
        depth, paren, inner = 1, 0, [t]
        for j in range(i + 1, min(len(toks), i + 400)):
            u = toks[j]
            if u.text in TEMPLATE_STOP and paren == 0:
                break
            if u.text in ('(', '['):
                paren += 1
            elif u.text in (')', ']'):
                paren -= 1
                if paren < 0:
                    break
            elif u.text == '<' and toks[j - 1].kind == 'id':
                depth += 1
                inner.append(u)
            elif u.text in ('>', '>>') and paren == 0:
                depth -= 1 if u.text == '>' else 2
                inner.append(u)
                if depth <= 0:
                    for v in inner:
                        v.tmpl = True
                    break


# --------------------------------------------------------------------------
# Mutant generation.

REL_SWAP = {'<': '<=', '<=': '<', '>': '>=', '>=': '>', '==': '!=', '!=': '=='}
EXPR_END_KINDS = ('id', 'num', 'str')
NOT_OPERANDS = {'return', 'case', 'operator', 'const', 'auto', 'typename', 'template', 'new',
                'delete', 'throw', 'sizeof', 'co_return'}
DECL_START = {'const', 'constexpr', 'static', 'auto', 'int', 'unsigned', 'signed', 'long', 'short',
              'char', 'bool', 'double', 'float', 'void', 'size_t', 'int64_t', 'int32_t',
              'uint64_t', 'uint32_t', 'uint8_t', 'int16_t', 'uint16_t', 'int8_t', 'struct',
              'class', 'enum', 'thread_local', 'volatile', 'extern', 'inline', 'typename',
              'using', 'typedef', 'static_assert', 'namespace', 'template', 'friend',
              'constinit', 'consteval', 'explicit', 'virtual'}
NO_DELETE_START = DECL_START | {'return', 'case', 'default', 'public', 'private', 'protected',
                                'else', 'co_return', 'goto', '[', '#'}
CODE_BRACE_PREV = {')', 'else', 'do', 'try', ']', 'const', 'noexcept', 'override', 'final',
                   'mutable'}


def _is_operand_end(t):
    return (t.kind in EXPR_END_KINDS and t.text not in NOT_OPERANDS) or t.text in (')', ']')


def _is_operand_start(t):
    return t.kind in ('id', 'num', 'str') or t.text in ('(', '!', '-', '~', '*', '&', '::',
                                                          '++', '--')


def _match(toks, i):
    """Index of the bracket closing toks[i] ( '(' , '[' or '{' )."""
    pairs = {'(': ')', '[': ']', '{': '}'}
    opener, closer = toks[i].text, pairs[toks[i].text]
    depth = 0
    for j in range(i, len(toks)):
        if toks[j].text == opener:
            depth += 1
        elif toks[j].text == closer:
            depth -= 1
            if depth == 0:
                return j
    return None


def _brace_kinds(toks):
    """For every token, whether it lies directly in a block of code (function
    body or a block inside one), from the kind of brace that encloses it."""
    in_code = [False] * len(toks)
    stack = []
    for i, t in enumerate(toks):
        in_code[i] = bool(stack) and stack[-1]
        if t.text == '{':
            prev = toks[i - 1] if i else None
            code = False
            if prev is not None:
                if prev.text in CODE_BRACE_PREV:
                    code = True
                elif prev.text in (';', '{', '}') and stack and stack[-1]:
                    code = True
                elif prev.text == ':' and stack and stack[-1]:
                    code = True
            stack.append(code)
        elif t.text == '}' and stack:
            stack.pop()
    return in_code


def _bool_function_bodies(toks):
    """(open, close) token indices of bodies of functions and lambdas that
    return bool."""
    bodies = []
    n = len(toks)
    for i, t in enumerate(toks):
        if t.text != 'bool' or i + 1 >= n:
            continue
        j = i + 1
        if toks[i - 1].text == '->' and toks[j].text == '{':
            close = _match(toks, j)
            if close:
                bodies.append((j, close))
            continue
        # (qualified) name, then '('
        while j < n and (toks[j].kind == 'id' or toks[j].text == '::'):
            if toks[j].text == 'operator':
                j += 2
                if j < n and toks[j].text != '(':
                    j += 1
                break
            j += 1
        if j >= n or toks[j].text != '(' or j == i + 1:
            continue
        close = _match(toks, j)
        if close is None:
            continue
        k = close + 1
        while k < n and toks[k].text in ('const', 'noexcept', 'override', 'final', '&', '&&'):
            k += 1
        if k < n and toks[k].text == '{':
            end = _match(toks, k)
            if end:
                bodies.append((k, end))
    return bodies


def _lambda_bodies(toks, lo, hi):
    """(open, close) of lambda bodies strictly inside toks[lo..hi]."""
    out = []
    for k in range(lo + 1, hi):
        if toks[k].text != '{':
            continue
        p = k - 1
        while p > lo and toks[p].text in ('mutable', 'noexcept', 'constexpr'):
            p -= 1
        is_lambda = False
        if toks[p].text == ']':
            is_lambda = True
        elif toks[p].text == ')':
            depth = 0
            for q in range(p, lo, -1):
                if toks[q].text == ')':
                    depth += 1
                elif toks[q].text == '(':
                    depth -= 1
                    if depth == 0:
                        is_lambda = toks[q - 1].text == ']'
                        break
        else:
            # `-> Type {`
            q = p
            while q > lo and (toks[q].kind == 'id' or toks[q].text in ('::', '<', '>', '*', '&')):
                q -= 1
            is_lambda = toks[q].text == '->' and q < p
        if is_lambda:
            e = _match(toks, k)
            if e:
                out.append((k, e))
    return out


CHAIN_STOP = {',', ';', '{', '}', '=', '+=', '-=', '<<', '>>', 'return', '?', ':', '&&', '||',
              '<', '<=', '>', '>=', '==', '!=', 'throw'}


def _string_chain(toks, i, left=True):
    """Whether the additive expression around toks[i] has a string literal
    (then `+` is concatenation, and `-` would not compile)."""
    for step in ((-1, 1) if left else (1,)):
        depth, j = 0, i + step
        while 0 <= j < len(toks):
            u = toks[j]
            if u.text in ('(', '['):
                depth += 1 if step > 0 else -1
            elif u.text in (')', ']'):
                depth += -1 if step > 0 else 1
            if depth < 0:
                break
            if depth == 0 and u.text in CHAIN_STOP and not u.tmpl:
                break
            if u.kind == 'str':
                return True
            j += step
    return False


def _is_declaration(stmt):
    t0 = stmt[0]
    if t0.text in DECL_START or t0.text == '[':
        return True
    j = 0
    if stmt[j].text == '::':
        j += 1
    if j >= len(stmt) or stmt[j].kind != 'id':
        return False
    j += 1
    while j + 1 < len(stmt) and stmt[j].text == '::' and stmt[j + 1].kind == 'id':
        j += 2
    if j < len(stmt) and stmt[j].text == '<' and stmt[j].tmpl:
        depth = 0
        while j < len(stmt):
            if stmt[j].tmpl and stmt[j].text == '<':
                depth += 1
            elif stmt[j].tmpl and stmt[j].text in ('>', '>>'):
                depth -= 1 if stmt[j].text == '>' else 2
                if depth <= 0:
                    j += 1
                    break
            j += 1
        while j + 1 < len(stmt) and stmt[j].text == '::' and stmt[j + 1].kind == 'id':
            j += 2
    while j < len(stmt) and (stmt[j].text in ('*', '&', '&&') and not stmt[j].wsb
                             or stmt[j].text == 'const'):
        j += 1
    while j < len(stmt) and stmt[j].text == 'const':
        j += 1
    return j < len(stmt) and stmt[j].kind == 'id'


class Mutant:
    __slots__ = ('file', 'offset', 'end', 'line', 'col', 'op', 'original', 'replacement', 'id',
                 'file_sha')

    def __init__(self, file, tok_start, tok_end, line, col, op, original, replacement, anchor):
        self.file, self.offset, self.end = file, tok_start, tok_end
        self.line, self.col, self.op = line, col, op
        self.original, self.replacement = original, replacement
        # The id names the change by its line's text, not its offset, so an
        # edit elsewhere in the file keeps it (and the CI sample) valid.
        key = '%s\0%s\0%s\0%s' % (file, anchor, op, replacement)
        self.id = hashlib.sha256(key.encode()).hexdigest()[:12]
        self.file_sha = None

    def folder(self):
        return scope_of(self.file)

    def apply(self, data):
        text = data.decode()
        return (text[:self.offset] + self.replacement + text[self.end:]).encode()

    def describe(self):
        def short(s):
            s = ' '.join(s.split())
            return s if len(s) <= 60 else s[:57] + '...'
        return '%s `%s` -> `%s`' % (self.op, short(self.original), short(self.replacement))

    def record(self):
        return {'id': self.id, 'file': self.file, 'line': self.line, 'col': self.col,
                'offset': self.offset, 'op': self.op, 'original': self.original,
                'replacement': self.replacement, 'file_sha': self.file_sha}


def generate(path, src):
    """All mutants of one file's source text."""
    toks = tokenize(src)
    lines = src.split('\n')
    out = []
    seen = set()
    anchors = collections.Counter()

    def add(a, b, op, repl):
        ta, tb = toks[a], toks[b]
        original = src[ta.start:tb.end]
        if original == repl:
            return
        text = lines[ta.line - 1]
        # The line's text, the column within it (indentation aside), and
        # which repeat of that same line in the file this is.
        base = '%s\0%d\0%s' % (text.strip(), ta.col - (len(text) - len(text.lstrip())), original)
        anchors[(base, op, repl)] += 1
        anchor = '%s\0%d' % (base, anchors[(base, op, repl)])
        m = Mutant(path, ta.start, tb.end, ta.line, ta.col, op, original, repl, anchor)
        if m.id not in seen:
            seen.add(m.id)
            out.append(m)

    n = len(toks)
    for i, t in enumerate(toks):
        prev = toks[i - 1] if i else None
        nxt = toks[i + 1] if i + 1 < n else None
        binary = (prev is not None and nxt is not None and t.wsb and t.wsa
                  and _is_operand_end(prev) and _is_operand_start(nxt))
        if t.kind == 'op':
            if t.text in REL_SWAP and binary and not t.tmpl:
                add(i, i, 'relational', REL_SWAP[t.text])
            elif t.text in ('&&', '||') and binary:
                add(i, i, 'logical', '||' if t.text == '&&' else '&&')
            elif t.text in ('+', '-') and binary and not _string_chain(toks, i):
                add(i, i, 'arithmetic', '-' if t.text == '+' else '+')
            elif t.text in ('+=', '-=') and t.wsb and t.wsa and not _string_chain(toks, i, False):
                add(i, i, 'arithmetic', '-=' if t.text == '+=' else '+=')
            elif t.text == '*' and binary and (nxt.kind in ('id', 'num') or nxt.text == '('):
                add(i, i, 'arithmetic', '/')
        elif t.kind == 'num':
            m = INT_RE.match(t.text)
            if not m:
                continue
            digits, suffix = m.group(1).replace("'", ''), m.group(2)
            if digits[:2].lower() in ('0x', '0b'):
                value = int(digits, 0)
            elif len(digits) > 1 and digits[0] == '0':
                value = int(digits, 8)
            else:
                value = int(digits)
            for delta in (1, -1):
                v = value + delta
                if v < 0:
                    continue
                if digits[:2] in ('0x', '0X'):
                    rep = '0x%X' % v
                else:
                    rep = str(v)
                add(i, i, 'constant', rep + suffix)
        elif t.kind == 'id' and t.text in ('if', 'while') and nxt is not None:
            j = i + 1
            if toks[j].text == 'constexpr':
                j += 1
            if j >= n or toks[j].text != '(':
                continue
            close = _match(toks, j)
            if close is None or close == j + 1:
                continue
            a = j + 1
            depth = 0
            for k in range(j + 1, close):
                if toks[k].text in ('(', '[', '{'):
                    depth += 1
                elif toks[k].text in (')', ']', '}'):
                    depth -= 1
                elif toks[k].text == ';' and depth == 0:
                    a = k + 1
            cond = toks[a:close]
            if not cond or any(u.text == '=' for u in cond):
                continue
            text = src[toks[a].start:toks[close - 1].end]
            add(a, close - 1, 'negate-condition', '!(' + text + ')')

    # return-value replacement in bool functions and lambdas
    for lo, hi in _bool_function_bodies(toks):
        skip = _lambda_bodies(toks, lo, hi)
        for k in range(lo + 1, hi):
            if toks[k].text != 'return' or any(a < k < b for a, b in skip):
                continue
            e = k + 1
            depth = 0
            while e < hi and not (toks[e].text == ';' and depth == 0):
                if toks[e].text in ('(', '[', '{'):
                    depth += 1
                elif toks[e].text in (')', ']', '}'):
                    depth -= 1
                e += 1
            if e >= hi or e == k + 1:
                continue
            expr = src[toks[k + 1].start:toks[e - 1].end]
            if expr in ('true', 'false'):
                add(k + 1, e - 1, 'return-value', 'false' if expr == 'true' else 'true')
            else:
                for repl in ('!(' + expr + ')', 'true', 'false'):
                    add(k + 1, e - 1, 'return-value', repl)

    # statement deletion: a whole line that is one statement
    in_code = _brace_kinds(toks)
    by_line = {}
    for i, t in enumerate(toks):
        by_line.setdefault(t.line, []).append(i)
    for line, idx in by_line.items():
        a, b = idx[0], idx[-1]
        if toks[b].text != ';' or not in_code[a] or a == 0:
            continue
        if toks[a].line != line or toks[b].line != line:
            continue
        prev = toks[a - 1]
        if prev.text not in (';', '{', '}'):
            if not (prev.text == ':' and by_line.get(prev.line) and
                    toks[by_line[prev.line][0]].text in ('case', 'default')):
                continue
        stmt = toks[a:b + 1]
        if stmt[0].text in NO_DELETE_START or _is_declaration(stmt):
            continue
        depth, ok = 0, True
        for u in stmt:
            if u.text in ('(', '[', '{'):
                depth += 1
            elif u.text in (')', ']', '}'):
                depth -= 1
                if depth < 0:
                    ok = False
                    break
        if not ok or depth != 0:
            continue
        # the statement must end on this line's last ';' (not `x = [] {...};` halves)
        if b + 1 < len(toks) and toks[b + 1].text == 'else':
            continue
        add(a, b, 'delete-statement', ';')
    out.sort(key=lambda m: (m.offset, m.op, m.replacement))
    return out


# --------------------------------------------------------------------------
# A Python mutator on the standard library's `ast` (issue 23). Each mutant is
# a text edit of the node's own span (comments and layout stay), found from
# the node positions; the operator of a binary expression is located with
# `tokenize` between its operands. Docstrings, annotations, f-strings' insides
# and `if __name__ == "__main__"` are left alone.

PY_REL = {ast.Lt: '<=', ast.LtE: '<', ast.Gt: '>=', ast.GtE: '>', ast.Eq: '!=',
          ast.NotEq: '==', ast.In: 'not in', ast.NotIn: 'in', ast.Is: 'is not',
          ast.IsNot: 'is'}
PY_REL_TEXT = {ast.Lt: '<', ast.LtE: '<=', ast.Gt: '>', ast.GtE: '>=', ast.Eq: '==',
               ast.NotEq: '!=', ast.In: 'in', ast.NotIn: 'not in', ast.Is: 'is',
               ast.IsNot: 'is not'}
PY_ARITH = {ast.Add: ('+', '-'), ast.Sub: ('-', '+'), ast.Mult: ('*', '//'),
            ast.FloorDiv: ('//', '*'), ast.Div: ('/', '*')}
PY_SEQ_LITERALS = (ast.JoinedStr, ast.List, ast.Tuple, ast.ListComp)
PY_DROPPABLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Break, ast.Continue,
                ast.Delete)
PY_OPS = ['relational', 'arithmetic', 'constant', 'logical', 'negate-condition',
          'return-value', 'delete-statement', 'drop-return', 'drop-raise', 'drop-assert',
          'dict-keys', 'slice']


def _py_is_seq(node):
    """An operand whose `+`/`*` is concatenation or repetition, not arithmetic
    (`+` -> `-` there is a TypeError, not a plausible bug): a literal, an
    f-string, a `str(...)`/`"".join(...)`, or a conditional of them."""
    if isinstance(node, PY_SEQ_LITERALS):
        return True
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (str, bytes))
    if isinstance(node, ast.Call):
        f = node.func
        return ((isinstance(f, ast.Name) and f.id in ('str', 'repr', 'list', 'tuple'))
                or (isinstance(f, ast.Attribute) and f.attr in ('join', 'format', 'strip',
                                                                'rstrip', 'lstrip')))
    if isinstance(node, ast.IfExp):
        return _py_is_seq(node.body) or _py_is_seq(node.orelse)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _py_is_seq(node.left) or _py_is_seq(node.right)
    return False


def generate_py(path, src):
    """All mutants of one Python file's source text."""
    tree = ast.parse(src)
    lines = src.split('\n')
    starts = [0]
    for ln in lines:
        starts.append(starts[-1] + len(ln) + 1)
    enc = {}

    def off(lineno, col_bytes):
        """Character offset of (line, UTF-8 byte column)."""
        if lineno not in enc:
            enc[lineno] = lines[lineno - 1].encode()
        return starts[lineno - 1] + len(enc[lineno][:col_bytes].decode(errors='replace'))

    def span(node):
        return off(node.lineno, node.col_offset), off(node.end_lineno, node.end_col_offset)

    toks = []  # (offset, end, string) of OP and NAME tokens
    for t in pytokenize.generate_tokens(io.StringIO(src).readline):
        if t.type in (pytokenize.OP, pytokenize.NAME):
            a = starts[t.start[0] - 1] + t.start[1]
            b = starts[t.end[0] - 1] + t.end[1]
            toks.append((a, b, t.string))
    tok_starts = [t[0] for t in toks]

    def op_between(lo, hi, words):
        """Span of the operator token(s) `words` (e.g. ['not', 'in']) in [lo, hi)."""
        k = bisect.bisect_left(tok_starts, lo)
        while k < len(toks) and toks[k][0] < hi:
            if [w for _, _, w in toks[k:k + len(words)]] == words:
                return toks[k][0], toks[k + len(words) - 1][1]
            k += 1
        return None

    out, seen = [], set()
    anchors = collections.Counter()

    def add(a, b, op, repl):
        original = src[a:b]
        if original == repl:
            return
        ln = src.count('\n', 0, a) + 1
        text = lines[ln - 1]
        col = a - starts[ln - 1] + 1
        base = '%s\0%d\0%s' % (text.strip(), col - (len(text) - len(text.lstrip())), original)
        anchors[(base, op, repl)] += 1
        anchor = '%s\0%d' % (base, anchors[(base, op, repl)])
        m = Mutant(path, a, b, ln, col, op, original, repl, anchor)
        if m.id not in seen:
            seen.add(m.id)
            out.append(m)

    def text(node):
        a, b = span(node)
        return src[a:b]

    def paren(node):
        t = text(node)
        simple = (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant)
        return t if isinstance(node, simple) else '(' + t + ')'

    def negate(node):
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return text(node.operand)  # `not x` -> `x`, not `not (not x)`
        return 'not ' + paren(node)

    def is_docstring(stmt, parent_body, k):
        return (k == 0 and isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
                and isinstance(stmt.value.value, str))

    def is_main_guard(node):
        t = node.test
        return (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name)
                and t.left.id == '__name__')

    negated_nots = set()  # `not x` nodes already mutated as a negated condition

    def visit(node, in_func):
        if isinstance(node, ast.JoinedStr):
            return  # f-strings: positions inside are unreliable before 3.12
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for d in getattr(node, 'decorator_list', []):
                visit(d, in_func)
            for d in node.args.defaults + [x for x in node.args.kw_defaults if x]:
                visit(d, in_func)
            body = node.body if isinstance(node.body, list) else [node.body]
            for k, s in enumerate(body):
                if isinstance(node, ast.Lambda):
                    visit(s, True)
                elif not is_docstring(s, body, k):
                    visit(s, True)
            return
        if isinstance(node, ast.If) and is_main_guard(node):
            return
        if isinstance(node, ast.ClassDef):
            for k, s in enumerate(node.body):
                if not is_docstring(s, node.body, k):
                    visit(s, in_func)
            return
        mutate(node, in_func)
        for field, value in ast.iter_fields(node):
            if field in ('annotation', 'returns', 'type_comment'):
                continue
            if isinstance(value, list):
                for k, v in enumerate(value):
                    if isinstance(v, ast.AST):
                        if isinstance(node, ast.Module) and is_docstring(v, value, k):
                            continue
                        visit(v, in_func)
            elif isinstance(value, ast.AST):
                visit(value, in_func)

    def mutate(node, in_func):
        if isinstance(node, ast.Compare):
            left = node.left
            for op, right in zip(node.ops, node.comparators):
                words = PY_REL_TEXT[type(op)].split()
                s = op_between(span(left)[1], span(right)[0], words)
                if s:
                    add(s[0], s[1], 'relational', PY_REL[type(op)])
                left = right
        elif isinstance(node, ast.BinOp) and type(node.op) in PY_ARITH:
            if not (_py_is_seq(node.left) or _py_is_seq(node.right)):
                sym, repl = PY_ARITH[type(node.op)]
                s = op_between(span(node.left)[1], span(node.right)[0], [sym])
                if s:
                    add(s[0], s[1], 'arithmetic', repl)
        elif isinstance(node, ast.AugAssign) and type(node.op) in (ast.Add, ast.Sub):
            if not _py_is_seq(node.value):
                sym = '+=' if isinstance(node.op, ast.Add) else '-='
                s = op_between(span(node.target)[1], span(node.value)[0], [sym])
                if s:
                    add(s[0], s[1], 'arithmetic', '-=' if sym == '+=' else '+=')
        elif isinstance(node, ast.BoolOp):
            word = 'and' if isinstance(node.op, ast.And) else 'or'
            for x, y in zip(node.values, node.values[1:]):
                s = op_between(span(x)[1], span(y)[0], [word])
                if s:
                    add(s[0], s[1], 'logical', 'or' if word == 'and' else 'and')
        elif isinstance(node, ast.Constant):
            v = node.value
            a, b = span(node)
            if isinstance(v, bool):
                add(a, b, 'constant', 'False' if v else 'True')
            elif isinstance(v, int):
                add(a, b, 'constant', str(v + 1))
                if v != 0:
                    add(a, b, 'constant', str(v - 1))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            if id(node) not in negated_nots:
                a, b = span(node)
                add(a, b, 'negate-condition', text(node.operand))
        elif isinstance(node, ast.Dict):
            keys = node.keys
            for x, y in zip(keys, keys[1:]):
                if (isinstance(x, ast.Constant) and isinstance(y, ast.Constant)
                        and x.value != y.value):
                    (xa, xb), (ya, yb) = span(x), span(y)
                    add(xa, yb, 'dict-keys', src[ya:yb] + src[xb:ya] + src[xa:xb])
        elif isinstance(node, ast.Slice):
            for bound in (node.lower, node.upper):
                if bound is None:
                    continue
                a, b = span(bound)
                add(a, b, 'slice', '')
                if not (isinstance(bound, ast.Constant) and isinstance(bound.value, int)):
                    add(a, b, 'slice', paren(bound) + ' + 1')
                    add(a, b, 'slice', paren(bound) + ' - 1')
        # conditions
        if isinstance(node, (ast.If, ast.While, ast.IfExp)):
            a, b = span(node.test)
            if isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not):
                negated_nots.add(id(node.test))
            add(a, b, 'negate-condition', negate(node.test))
        elif isinstance(node, ast.comprehension):
            for cond in node.ifs:
                a, b = span(cond)
                if isinstance(cond, ast.UnaryOp) and isinstance(cond.op, ast.Not):
                    negated_nots.add(id(cond))
                add(a, b, 'negate-condition', negate(cond))
        # statements
        if isinstance(node, ast.Return) and in_func:
            a, b = span(node)
            add(a, b, 'drop-return', 'pass')
            v = node.value
            if isinstance(v, (ast.Compare, ast.BoolOp)) or (
                    isinstance(v, ast.UnaryOp) and isinstance(v.op, ast.Not)):
                va, vb = span(v)
                if isinstance(v, ast.UnaryOp):
                    negated_nots.add(id(v))
                add(va, vb, 'return-value', negate(v))
        elif isinstance(node, ast.Raise):
            a, b = span(node)
            add(a, b, 'drop-raise', 'pass')
        elif isinstance(node, ast.Assert):
            a, b = span(node)
            add(a, b, 'drop-assert', 'pass')
        elif isinstance(node, PY_DROPPABLE) and in_func:
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                return  # a docstring or `...`
            a, b = span(node)
            add(a, b, 'delete-statement', 'pass')

    visit(tree, False)
    out.sort(key=lambda m: (m.offset, m.op, m.replacement))
    return out


def scope_of(path):
    for s in SCOPES:
        if path == s or path.startswith(s + '/'):
            return s
    return None


# --------------------------------------------------------------------------
# Source snapshot and scratch copy.

def source_files(rev):
    """{path: bytes} of the tree to test: the working tree (tracked and
    untracked-but-not-ignored files) or, with rev, that commit."""
    files = {}
    if rev:
        data = subprocess.run(['git', '-C', ROOT, 'archive', '--format=tar', rev],
                              check=True, stdout=subprocess.PIPE).stdout
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar.getmembers():
                if member.isfile():
                    files[member.name] = tar.extractfile(member).read()
        return files
    if FILE_LIST:
        # a copy without .git (a device run): the list written by --write-file-list
        with open(FILE_LIST) as f:
            paths = [line.rstrip('\n') for line in f if line.strip()]
    else:
        out = subprocess.run(['git', '-C', ROOT, 'ls-files', '-z', '-co', '--exclude-standard'],
                             check=True, stdout=subprocess.PIPE).stdout.decode()
        paths = out.split('\0')
    for p in paths:
        if not p or p.startswith('.mutate/'):
            continue
        full = os.path.join(ROOT, p)
        if os.path.isfile(full) and not os.path.islink(full):
            with open(full, 'rb') as f:
                files[p] = f.read()
    return files


def mutation_sources(files):
    return {p: d for p, d in sorted(files.items())
            if scope_of(p) and (p.endswith('.py') if scope_of(p) in PY_SCOPES
                                else p.endswith(('.cc', '.h')))}


def all_mutants(files):
    muts = []
    for p, data in mutation_sources(files).items():
        file_sha = sha(data)[:16]
        gen = generate_py if p.endswith('.py') else generate
        for m in gen(p, data.decode()):
            m.file_sha = file_sha
            muts.append(m)
    return muts


def write_file(path, data):
    """Writes data with a fresh mtime, so that ninja rebuilds what uses it."""
    tmp = path + '.mutate-tmp'
    with open(tmp, 'wb') as f:
        f.write(data)
    os.replace(tmp, path)
    now = time.time()
    os.utime(path, (now, now))


def sync_work(files):
    """Makes .mutate/work hold exactly `files`; rewrites only what differs."""
    os.makedirs(WORK, exist_ok=True)
    manifest_path = os.path.join(STATE, 'manifest.json')
    old = []
    if os.path.exists(manifest_path):
        with open(manifest_path) as f:
            old = json.load(f)
    changed = []
    for p, data in files.items():
        full = os.path.join(WORK, p)
        try:
            with open(full, 'rb') as f:
                same = f.read() == data
        except OSError:
            same = False
        if not same:
            os.makedirs(os.path.dirname(full), exist_ok=True)
            write_file(full, data)
            changed.append(p)
        try:
            mode = os.stat(os.path.join(ROOT, p)).st_mode & 0o777
        except OSError:
            mode = 0o755 if p.endswith(('.sh', '.py')) else 0o644
        if os.stat(full).st_mode & 0o777 != mode:
            os.chmod(full, mode)
    for p in old:
        if p not in files and os.path.exists(os.path.join(WORK, p)):
            os.remove(os.path.join(WORK, p))
            changed.append(p)
    with open(manifest_path, 'w') as f:
        json.dump(sorted(files), f)
    return changed


def snapshot_digest(files):
    """The tree a result holds for: every file but the docs and this tool."""
    h = hashlib.sha256()
    for p in sorted(files):
        if p.startswith('docs/') or p.startswith('scripts/mutat'):
            continue
        h.update(p.encode() + b'\0' + sha(files[p]).encode())
    return h.hexdigest()[:16]


# --------------------------------------------------------------------------
# Build and tests.

def run_bounded(cmd, timeout, cwd=None, env=None, log_path=None, keep=256 * 1024):
    """(returncode or None on timeout, seconds, output). Keeps at most the
    first and last `keep` bytes of the output (a mutant may print forever);
    writes them to log_path when given."""
    t0 = time.time()
    proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            start_new_session=True)
    head, tail, dropped = bytearray(), bytearray(), [0]

    def reader():
        while True:
            chunk = proc.stdout.read1(65536)
            if not chunk:
                return
            if len(head) < keep:
                take = keep - len(head)
                head.extend(chunk[:take])
                chunk = chunk[take:]
            tail.extend(chunk)
            if len(tail) > 2 * keep:
                dropped[0] += len(tail) - keep
                del tail[:len(tail) - keep]
    th = threading.Thread(target=reader, daemon=True)
    th.start()
    try:
        rc = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
        rc = None
    except BaseException:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        raise
    th.join(10)
    if dropped[0] or len(tail) > keep:
        dropped[0] += max(0, len(tail) - keep)
        data = bytes(head) + b'\n[... %d bytes left out ...]\n' % dropped[0] + bytes(tail[-keep:])
    else:
        data = bytes(head) + bytes(tail)
    if log_path:
        with open(log_path, 'wb') as f:
            f.write(data)
    return rc, time.time() - t0, data.decode(errors='replace')


def _configured_dirs():
    """(source dir, build dir) the build dir was configured with; they differ
    from WORK/BUILD when the whole tree was copied elsewhere (a parallel
    device run copies one built tree per worker)."""
    try:
        with open(os.path.join(BUILD, 'meson-info', 'meson-info.json')) as f:
            d = json.load(f)['directories']
        return d['source'], d['build']
    except (OSError, KeyError, ValueError):
        return WORK, BUILD


def rebase(value):
    """A path (or a string holding paths) of the configured build dir moved to
    BUILD; paths into the source tree stay (tests read their data there, and
    only the copy's own sources are mutated)."""
    _, build = _configured_dirs()
    if build == BUILD or not isinstance(value, str):
        return value
    return value.replace(build, BUILD)


# No debug info: linking the test binaries is most of a mutant's time.
# libstdc++'s assertions turn an out-of-bounds `[]` (a `<` made `<=`) into an
# abort a test sees, instead of undefined behaviour that may pass.
MUTANT_BUILD_OPTIONS = ['-Dgpu=disabled', '-Ddebug=false', '-Dcpp_args=-D_GLIBCXX_ASSERTIONS']


def configure(jobs):
    if not os.path.exists(os.path.join(BUILD, 'build.ninja')):
        log('mutate: configuring %s (%s)' % (os.path.relpath(BUILD, ROOT),
                                              ' '.join(MUTANT_BUILD_OPTIONS)))
        subprocess.run(['meson', 'setup', BUILD] + MUTANT_BUILD_OPTIONS, cwd=WORK,
                       check=True,
                       stdout=subprocess.DEVNULL)


def ninja(targets, jobs, timeout):
    cmd = ['ninja', '-C', BUILD, '-j', str(jobs)] + list(targets)
    return run_bounded(cmd, timeout)


class Test:
    def __init__(self, name, suite, cmd, env, cwd, targets, should_fail, timeout):
        self.name, self.suite, self.cmd, self.env = name, suite, cmd, env
        self.cwd, self.targets = cwd, targets
        self.should_fail, self.timeout = should_fail, timeout
        self.whole = name  # the Meson test this is (a part of)

    def part(self, suffix, args):
        t = Test('%s[%s]' % (self.name, suffix), self.suite, self.cmd + list(args),
                 dict(self.env), self.cwd, self.targets, self.should_fail, self.timeout)
        t.whole = self.name
        return t


class _Stub:
    def __init__(self, *args, **kwargs):
        pass

    def __setstate__(self, state):
        for part in state if isinstance(state, tuple) else (state,):
            if isinstance(part, dict):
                self.__dict__.update(part)


class _StubMeta(type):
    def __getattr__(cls, name):
        return name


class _TestUnpickler(pickle.Unpickler):
    def find_class(self, module, name):
        if module.startswith('mesonbuild'):
            return _StubMeta(name, (_Stub,), {})
        return super().find_class(module, name)


def should_fail_tests():
    """Names of the should_fail tests (Meson 1.0's introspection leaves the
    flag out; its test setup pickle has it), or None when unreadable."""
    try:
        with open(os.path.join(BUILD, 'meson-private', 'meson_test_setup.dat'), 'rb') as f:
            return {t.name for t in _TestUnpickler(f).load() if getattr(t, 'should_fail', False)}
    except Exception as e:  # a Meson whose pickle this cannot read
        log('mutate: cannot read should_fail flags (%s); running tests through meson test' % e)
        return None


def check_parts(test):
    """Exits when the parts of a split test leave out one of its test cases
    (a case added since the split would never run)."""
    names = [x for _, a in TEST_PARTS[test.name] for x in a if not x.startswith('-')]
    if test.cmd[-1].endswith('.gtest') or not any(c.endswith('.py') for c in test.cmd):
        listed = subprocess.run(test.cmd + ['--gtest_list_tests'], stdout=subprocess.PIPE,
                                env=test.env).stdout.decode()
        suites = {ln[:-1] for ln in listed.splitlines() if re.fullmatch(r'\S+\.', ln)}
        pats = [p for _, a in TEST_PARTS[test.name] for x in a if x.startswith('--gtest_filter=')
                for p in x.split('=', 1)[1].split(':')]
        missing = sorted(x for x in suites if not any(
            re.fullmatch(re.escape(p).replace(r'\*', '.*'), x + '.x') for p in pats))
    else:
        script = next(c for c in test.cmd if c.endswith('.py'))
        with open(script) as f:
            tree = ast.parse(f.read())
        missing = []
        for c in tree.body:
            if isinstance(c, ast.ClassDef):
                for f in c.body:
                    if (isinstance(f, ast.FunctionDef) and f.name.startswith('test')
                            and c.name not in names and c.name + '.' + f.name not in names):
                        missing.append(c.name + '.' + f.name)
    if missing:
        sys.exit('mutate: the parts of %s (TEST_PARTS) leave out %s'
                 % (test.name, ' '.join(missing)))


def load_tests(suites=None, parts=True):
    suites_wanted = suites or SUITES
    failing = should_fail_tests()
    intro = subprocess.run(['meson', 'introspect', '--tests', '--targets', BUILD], check=True,
                           stdout=subprocess.PIPE).stdout
    data = json.loads(rebase(intro.decode()))
    by_id = {t['id']: t['filename'] for t in data['targets']}
    tests = []
    for t in data['tests']:
        suites = [s.split(':', 1)[-1] for s in t['suite']]
        suite = next((s for s in suites_wanted if s in suites), None)
        if suite is None:
            continue
        targets = set()
        for f in [t['cmd'][0]] + [x for d in t.get('depends', []) for x in by_id.get(d, [])]:
            if os.path.abspath(f).startswith(BUILD + os.sep):
                targets.add(os.path.relpath(f, BUILD))
        env = dict(os.environ)
        env.update(t.get('env') or {})
        cmd, should_fail = t['cmd'], t['name'] in (failing or ())
        if failing is None:
            cmd = ['meson', 'test', '-C', BUILD, '--no-rebuild', '--quiet', t['name']]
        test = Test(t['name'], suite, cmd, env, t.get('workdir') or BUILD,
                    sorted(targets), should_fail, t.get('timeout') or 30)
        if parts and failing is not None and t['name'] in TEST_PARTS:
            check_parts(test)
            tests += [test.part(suffix, a) for suffix, a in TEST_PARTS[t['name']]]
        else:
            tests.append(test)
    r3check = os.path.join(BUILD, 'src', 'r3check')
    tests.append(Test(VERIFY, VERIFY, [r3check, 'verify', '--cases', '2000'], dict(os.environ),
                      WORK, ['src/r3check'], False, 120))
    for t in tests:
        # Reproducible properties, no shrinking (a kill needs no small case),
        # stop at the first failing gtest case, fixed malloc perturbation.
        t.env.setdefault('RC_PARAMS', 'seed=1 noshrink=1')
        t.env['GTEST_FAIL_FAST'] = '1'
        t.env.setdefault('MALLOC_PERTURB_', '93')
        # No .pyc: a mutant and its revert may share an mtime second and a
        # size, and Python would then run the stale bytecode.
        t.env['PYTHONDONTWRITEBYTECODE'] = '1'
    return tests


FAILED_RE = re.compile(r'^\[  FAILED  \] (\S+)', re.M)


def run_test(t, timeout, log_path):
    rc, secs, out = run_bounded(t.cmd, timeout, cwd=t.cwd, env=t.env, log_path=log_path)
    if rc is None:
        return 'timeout', secs, None
    ok = rc in (0, 77)
    if t.should_fail:
        ok = rc != 0
    if ok:
        return 'pass', secs, None
    m = FAILED_RE.search(out)
    detail = m.group(1) if m else 'exit %d' % rc
    return 'fail', secs, detail


def affected_targets(paths, all_targets):
    """{source path: set of ninja outputs that depend on it}, by touching each
    file and asking ninja (dry run) why it would rebuild."""
    result = {}
    for p in paths:
        full = os.path.join(WORK, p)
        st = os.stat(full)
        os.utime(full, (st.st_atime, time.time() + 5))
        try:
            r = subprocess.run(['ninja', '-C', BUILD, '-n', '-v', '-d', 'explain'] + all_targets,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        finally:
            os.utime(full, ns=(st.st_atime_ns, st.st_mtime_ns))
        dirty = set()
        for line in r.stdout.decode(errors='replace').splitlines():
            m = re.match(r'ninja explain: (?:output )?(\S+) (?:is dirty|older than)', line)
            if m:
                dirty.add(m.group(1))
            # the commands ninja would run: compilers and linkers name their output
            for m in re.finditer(r'(?:^|\s)-o\s*(\S+)', line):
                dirty.add(m.group(1))
        result[p] = dirty
    return result


def objects_of(path):
    """Object files compiled from a .cc (compile_commands.json)."""
    with open(os.path.join(BUILD, 'compile_commands.json')) as f:
        db = json.loads(rebase(f.read()))
    full = os.path.join(WORK, path)
    return [e['output'] for e in db
            if os.path.normpath(os.path.join(e['directory'], e['file'])) == full]


# --------------------------------------------------------------------------
# Results.

def load_results(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return json.load(f).get('mutants', [])


def save_results(path, records):
    tmp = path + '.tmp'
    with open(tmp, 'w') as f:
        json.dump({'version': 1, 'mutants': records}, f, indent=1)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_id_file(path):
    """{id: rest of the line} of a file of `ID rest...` lines; '#' starts a
    comment line."""
    out = {}
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            parts = line.split(None, 1)
            out[parts[0]] = parts[1] if len(parts) > 1 else ''
    return out


def pick_ci(records, current, n, seed):
    """Writes n killed mutants (fast ones, round-robin over the folders) to
    the CI sample file, each with the test that killed it."""
    cur = {(m.id, m.file_sha) for m in current}
    by_scope = {}
    for r in latest(records).values():
        # killed by the default suites, which --ci runs
        if ((r['id'], r.get('file_sha')) in cur and r['status'] == 'killed'
                and r.get('suite', 'unit') in SUITES + [VERIFY]):
            by_scope.setdefault(scope_of(r['file']), []).append(r)
    for v in by_scope.values():
        v.sort(key=lambda r: (r['seconds'], r['id']))
    picked = []
    while len(picked) < n and any(by_scope.values()):
        for s in SCOPES:
            if by_scope.get(s) and len(picked) < n:
                picked.append(by_scope[s].pop(0))
    with open(CI_SAMPLE, 'w') as f:
        f.write('# Mutants that scripts/mutate.py --ci runs (docs/mutation.md): ID, then the\n'
                '# test that killed it in the full run (tried first). Each must still be\n'
                '# killed; an ID that is no longer generated is an error: pick a new sample\n'
                '# with scripts/mutate.py --pick-ci N after a run.\n')
        for r in picked:
            f.write('%s %s  # %s:%d %s `%s` -> `%s`\n' % (
                r['id'], r['killer'], r['file'], r['line'], r['op'],
                ' '.join(r['original'].split())[:50], ' '.join(r['replacement'].split())[:50]))
    print('wrote %d mutants to %s' % (len(picked), os.path.relpath(CI_SAMPLE, ROOT)))
    return 0


# --------------------------------------------------------------------------
# Running mutants.

class Runner:
    def __init__(self, args, files):
        self.args = args
        self.files = files
        self.sources = mutation_sources(files)
        self.jobs = args.jobs
        self.affected = None  # {source: ninja outputs that depend on it}
        self.coverage = None  # Coverage: which tests execute a mutant's line
        self.py_coverage = None  # PyCoverage: the same for the Python sources

    def prepare(self, full):
        """full: build everything and map sources to tests (a normal run);
        otherwise (--ci) build only what the tests that run need."""
        os.makedirs(LOGS, exist_ok=True)
        if self.args.in_place:
            restore_journal()
            if not os.path.exists(os.path.join(BUILD, 'build.ninja')):
                sys.exit('mutate: --in-place needs a configured build dir: meson setup %s'
                         % os.path.relpath(BUILD, ROOT))
        else:
            changed = sync_work(self.files)
            if changed:
                log('mutate: scratch copy updated (%d files)' % len(changed))
            build_files = [p for p in changed
                           if os.path.basename(p) in ('meson.build', 'meson_options.txt')]
            if build_files and _configured_dirs()[1] != BUILD:
                # A build dir copied from elsewhere would regenerate itself into
                # the original's paths: configure this one afresh.
                log('mutate: %s changed; configuring the copied build dir afresh'
                    % ', '.join(build_files))
                subprocess.run(['meson', 'setup', '--wipe', BUILD] + MUTANT_BUILD_OPTIONS,
                               cwd=WORK, check=True, stdout=subprocess.DEVNULL)
            configure(self.jobs)
        every = load_tests(self.args.suite, parts=not self.args.no_parts)
        for d, names, _ in os.walk(WORK):  # bytecode of earlier runs (see load_tests)
            if '__pycache__' in names and os.path.relpath(d, WORK).split(os.sep)[0] in (
                    'engines', 'scripts'):
                subprocess.run(['rm', '-rf', os.path.join(d, '__pycache__')])
        # a name is a test's or one of its parts' (TEST_PARTS)
        self.tests = [t for t in every if not {t.name, t.whole} & set(self.args.skip_test)
                      and (not self.args.test or {t.name, t.whole} & set(self.args.test))]
        unknown = set(self.args.skip_test) - {t.name for t in every} - {t.whole for t in every}
        if unknown:
            sys.exit('mutate: --skip-test: no such test: ' + ' '.join(sorted(unknown)))
        self.all_targets = sorted({x for t in self.tests for x in t.targets})
        # The source-to-output map is cached for the tree, so it is made over
        # every test of the suites, not only those --test/--skip-test keep (a
        # map of a subset would hide tests from later runs).
        every_target = sorted({x for t in every for x in t.targets})
        # 'map2': maps made before they covered every test are not reused
        digest = snapshot_digest(self.files) + ':' + os.path.relpath(BUILD, ROOT) + ':map2'
        cache = os.path.join(STATE, 'baseline.json')
        base = {}
        if os.path.exists(cache):
            with open(cache) as f:
                base = json.load(f)
        if base.get('digest') != digest:
            base = {'digest': digest, 'seconds': {}, 'affected': None}
        self.base = base
        if full:
            log('mutate: building the pristine copy (ninja -j%d)' % self.jobs)
            rc, secs, out = ninja(self.all_targets, self.jobs, 7200)
            if rc != 0:
                sys.exit('mutate: the pristine copy does not build:\n' + out[-3000:])
            if base.get('affected') is None:
                log('mutate: mapping sources to tests')
                if every_target != self.all_targets:  # the map's ninja dry runs need them built
                    rc, _, out = ninja(every_target, self.jobs, 7200)
                    if rc != 0:
                        sys.exit('mutate: the pristine copy does not build:\n' + out[-3000:])
                aff = affected_targets(sorted(self.sources), every_target)
                base['affected'] = {p: sorted(v) for p, v in aff.items()}
                self.save_base()
        if base.get('affected') is not None:
            self.affected = {p: set(v) for p, v in base['affected'].items()}

    def save_base(self):
        with open(os.path.join(STATE, 'baseline.json'), 'w') as f:
            json.dump(self.base, f, indent=1)

    def baseline(self, tests):
        """Runs the pristine tests that have no recorded time; all must pass."""
        todo = [t for t in tests if t.name not in self.base['seconds']]
        if not todo:
            return
        log('mutate: baseline run of %d test(s)' % len(todo))
        rc, _, out = ninja(sorted({x for t in todo for x in t.targets}), self.jobs, 7200)
        if rc != 0:
            sys.exit('mutate: the pristine copy does not build:\n' + out[-3000:])
        lock = threading.Lock()

        def one(t):
            path = os.path.join(LOGS, 'baseline-%s.txt' % t.name)
            res, secs, detail = run_test(t, max(t.timeout, 60) * 2, path)
            if res == 'pass':  # kept at once: a later failure does not lose it
                with lock:
                    self.base['seconds'][t.name] = round(secs, 3)
                    self.save_base()
            return t, path, res, secs, detail
        for t, path, res, secs, detail in parallel_map(one, todo, self.args.test_jobs):
            if res != 'pass':
                sys.exit('mutate: %s fails on the pristine copy (%s %s); fix that first, see %s'
                         % (t.name, res, detail or '', path))

    def order(self, m, hints, first=None):
        """The tests to run for mutant m, the likeliest killers first. Without
        the source-to-test map (--ci), every test is a candidate."""
        pref = PREFERRED.get(m.folder(), [])
        file_hints = hints.get(m.file, {})

        def seconds(t):
            return self.base['seconds'].get(t.name, SLOW_TEST_S)

        if m.file.endswith('.py'):
            # no build output depends on a .py file: the static map, then
            # the Python coverage map; fastest first
            wanted = PY_TESTS.get(m.folder(), [])
            tests = [t for t in self.tests if t.whole in wanted]
            if self.py_coverage is not None:
                tests = self.py_coverage.select(m, tests)
            return sorted(tests, key=lambda t: (
                t.name != first, -file_hints.get(t.name, 0),
                pref.index(t.whole) if t.whole in pref else len(pref), seconds(t), t.name))
        if self.affected is not None:
            dirty = self.affected.get(m.file, set())
            tests = [t for t in self.tests if any(x in dirty for x in t.targets)]
        else:
            tests = list(self.tests)
        if self.coverage is not None:
            tests = self.coverage.select(m, tests)

        def key(t):
            # slow tests (the real-torch engine tests) last, unless they are
            # the file's known killers or its preferred tests
            p = pref.index(t.name) if t.name in pref else len(pref)
            slow = not self.args.no_parts and p == len(pref) and seconds(t) >= SLOW_TEST_S
            return (t.name != first, -file_hints.get(t.name, 0), p, slow,
                    SUITE_ORDER.index(t.suite) if t.suite in SUITE_ORDER else len(SUITE_ORDER),
                    t.name)
        return sorted(tests, key=key)

    def run_one(self, m, hints, first=None):
        t_start = time.time()
        path = os.path.join(WORK, m.file)
        pristine = self.sources[m.file]
        rec = m.record()
        rec.update({'status': None, 'killer': None, 'detail': None, 'note': None})
        if self.args.in_place:
            with open(JOURNAL, 'w') as f:
                json.dump({'file': path, 'data': base64.b64encode(pristine).decode()}, f)
        write_file(path, m.apply(pristine))
        if m.file.endswith('.py'):
            drop_bytecode(path)
        try:
            status, killer, detail, note = self._judge(m, hints, rec, first)
        finally:
            write_file(path, pristine)
            if m.file.endswith('.py'):
                drop_bytecode(path)
            if self.args.in_place and os.path.exists(JOURNAL):
                os.remove(JOURNAL)
        rec.update({'status': status, 'killer': killer, 'detail': detail, 'note': note,
                    'seconds': round(time.time() - t_start, 1),
                    'when': time.strftime('%Y-%m-%dT%H:%M:%S')})
        return rec

    def _build(self, targets, rec, log_path):
        """Builds targets, adding to rec's build time; None when it worked,
        else the build-error note (its output goes to log_path)."""
        rc, secs, out = ninja(targets, self.jobs, self.args.build_timeout)
        rec['build_seconds'] = round(rec['build_seconds'] + secs, 1)
        if rc == 0:
            return None
        with open(log_path, 'w') as f:
            f.write(out)
        return 'build timed out' if rc is None else ''

    def _judge(self, m, hints, rec, first):
        log_path = os.path.join(LOGS, m.id + '.txt')
        rec['build_seconds'] = 0.0
        if m.file.endswith('.py'):
            # no build: a mutant that is no Python is a build error
            try:
                with open(os.path.join(WORK, m.file), 'rb') as f:
                    compile(f.read(), m.file, 'exec')
            except SyntaxError as e:
                with open(log_path, 'w') as f:
                    f.write('%s\n' % e)
                return 'build-error', None, None, 'SyntaxError'
        elif m.file.endswith('.cc'):
            objs = objects_of(m.file)
            if objs:
                failed = self._build(objs, rec, log_path)
                if failed is not None:
                    return 'build-error', None, None, failed or None
        tests = self.order(m, hints, first)
        rec['tests'] = 0
        if not tests:
            if self.coverage is not None and self.coverage.instrumented(m):
                return 'survived', None, None, 'no test executes this line'
            if self.py_coverage is not None and self.py_coverage.instrumented(m):
                return 'survived', None, None, 'no test executes this line'
            return 'survived', None, None, 'no test depends on this file'
        built = set()
        for t in tests:
            need = [x for x in t.targets if x not in built and not m.file.endswith('.py')]
            if need:
                failed = self._build(need, rec, log_path)
                if failed is not None:
                    return 'build-error', None, None, failed or 'while building ' + t.name
                built.update(need)
            base = self.base['seconds'].get(t.name, 10.0)
            timeout = max(self.args.min_test_timeout, base * self.args.timeout_factor)
            rec['tests'] += 1
            res, secs, detail = run_test(t, timeout, log_path)
            rec['suite'] = t.suite
            if res == 'timeout':
                return 'timeout', t.name, None, 'no result after %.0f s (baseline %.1f s)' % (
                    timeout, base)
            if res == 'fail':
                return 'killed', t.name, detail, None
        if os.path.exists(log_path):
            os.remove(log_path)
        return 'survived', None, None, None


def drop_bytecode(path):
    subprocess.run(['rm', '-rf', os.path.join(os.path.dirname(path), '__pycache__')])


def parallel_map(fn, items, jobs):
    """fn over items on `jobs` threads (each runs a subprocess), in order."""
    if jobs <= 1:
        return [fn(x) for x in items]
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(jobs) as pool:
        return list(pool.map(fn, items))


# --------------------------------------------------------------------------
# Coverage: run only the tests that execute a mutant's line.

class Coverage:
    """The line coverage of each test on the pristine tree (--collect-coverage).
    A mutant on a line that gcov instruments runs only the tests that
    executed that line: the others run the original code throughout, so they
    cannot see it. A line gcov does not instrument (a declaration, a
    continuation line, code folded at compile time) keeps every test."""

    def __init__(self, data):
        self.tests = {name: {f: set(lines) for f, lines in files.items()}
                      for name, files in data['tests'].items()}
        self.lines = {f: set(lines) for f, lines in data['instrumented'].items()}

    def instrumented(self, m):
        return m.line in self.lines.get(m.file, ())

    @staticmethod
    def key(t):
        return t.whole

    def select(self, m, tests):
        if not self.instrumented(m):
            return tests
        # a test missing from the map (added since) is kept
        return [t for t in tests if self.key(t) not in self.tests
                or m.line in self.tests[self.key(t)].get(m.file, ())]


def sources_digest(files):
    return snapshot_digest(mutation_sources(files))


def load_coverage(tree, files):
    """The map, when it was made from the same mutated sources. Tests edited
    since may reach lines the map does not credit them with (a kill can then
    be missed, never invented): refresh it after editing tests."""
    if not os.path.exists(COVERAGE):
        return None
    with open(COVERAGE) as f:
        data = json.load(f)
    if data.get('sources', data.get('tree')) != sources_digest(files) and data.get('tree') != tree:
        log('mutate: %s is for other sources; running every affected test '
            '(--collect-coverage to refresh)' % os.path.relpath(COVERAGE, ROOT))
        return None
    if data.get('tree') != tree:
        log('mutate: %s was made before the tests last changed (same sources); '
            '--collect-coverage refreshes it' % os.path.relpath(COVERAGE, ROOT))
    return Coverage(data)


def gcov_lines(gcda_files, cwd):
    """{source path as compiled: (instrumented lines, executed lines)} from
    gcov's JSON output for these .gcda files (their .gcno beside them)."""
    out = {}
    for k in range(0, len(gcda_files), 64):
        r = subprocess.run(['gcov', '--json-format', '--stdout'] + gcda_files[k:k + 64],
                           cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for doc in r.stdout.decode(errors='replace').splitlines():
            doc = doc.strip()
            if not doc.startswith('{'):
                continue
            d = json.loads(doc)
            base = d.get('current_working_directory', cwd)
            for f in d.get('files', []):
                path = os.path.normpath(os.path.join(base, f['file']))
                inst, hit = out.setdefault(path, (set(), set()))
                for ln in f.get('lines', []):
                    inst.add(ln['line_number'])
                    if ln['count'] > 0:
                        hit.add(ln['line_number'])
    return out


def collect_coverage(args, files):
    """Builds WORK/covbuild with -Db_coverage=true, runs every test of the
    suites once (each with its own GCOV_PREFIX, --test-jobs at a time) and
    writes COVERAGE: per test, the lines of the mutated sources it executed."""
    global BUILD
    sync_work(files)
    BUILD = os.path.join(WORK, 'covbuild')
    if not os.path.exists(os.path.join(BUILD, 'build.ninja')):
        log('mutate: configuring %s (-Db_coverage=true)' % os.path.relpath(BUILD, ROOT))
        subprocess.run(['meson', 'setup', BUILD, '-Dgpu=disabled', '-Db_coverage=true'],
                       cwd=WORK, check=True, stdout=subprocess.DEVNULL)
    # gcov's map is per Meson test: the tests whole
    tests = [t for t in load_tests(args.suite, parts=False) if t.name not in args.skip_test
             and (not args.test or t.name in args.test)]
    log('mutate: building the coverage build (ninja -j%d)' % args.jobs)
    rc, _, out = ninja(sorted({x for t in tests for x in t.targets}), args.jobs, 7200)
    if rc != 0:
        sys.exit('mutate: the coverage build failed:\n' + out[-3000:])
    root = os.path.join(STATE, 'cov')
    subprocess.run(['rm', '-rf', root], check=True)
    os.makedirs(LOGS, exist_ok=True)
    sources = {os.path.join(WORK, p): p for p in mutation_sources(files)}
    gcnos = []
    for d, _, names in os.walk(BUILD):
        gcnos += [os.path.join(d, n) for n in names if n.endswith('.gcno')]

    def one(t):
        prefix = os.path.join(root, t.name)
        t.env = dict(t.env, GCOV_PREFIX=prefix, GCOV_PREFIX_STRIP='0')
        res, secs, detail = run_test(t, max(t.timeout, 60) * 4,
                                     os.path.join(LOGS, 'coverage-%s.txt' % t.name))
        if res != 'pass':
            return t.name, res, detail, None
        gcdas = []
        for g in gcnos:  # gcov wants the .gcno beside the .gcda
            gcda = prefix + g[:-len('.gcno')] + '.gcda'
            if os.path.exists(gcda):
                os.symlink(g, gcda[:-len('.gcda')] + '.gcno')
                gcdas.append(gcda)
        lines = gcov_lines(gcdas, BUILD)
        return t.name, res, detail, lines

    log('mutate: coverage of %d tests (%d at a time)' % (len(tests), args.test_jobs))
    data = {'tree': snapshot_digest(files), 'sources': sources_digest(files), 'tests': {},
            'instrumented': {}}
    if args.test and os.path.exists(COVERAGE):
        # --test: refresh these tests in a map of the same tree, keep the rest
        with open(COVERAGE) as f:
            old = json.load(f)
        if old.get('tree') == data['tree']:
            data['tests'] = old['tests']
            data['instrumented'] = {f: set(v) for f, v in old['instrumented'].items()}
    for name, res, detail, lines in parallel_map(one, tests, args.test_jobs):
        if lines is None:
            sys.exit('mutate: %s fails in the coverage build (%s %s)' % (name, res, detail or ''))
        hits = {}
        for path, (inst, hit) in lines.items():
            rel = sources.get(path)
            if rel is None:
                continue
            data['instrumented'].setdefault(rel, set()).update(inst)
            if hit:
                hits[rel] = sorted(hit)
        data['tests'][name] = hits
    data['instrumented'] = {f: sorted(v) for f, v in data['instrumented'].items()}
    with open(COVERAGE, 'w') as f:
        json.dump(data, f)
    subprocess.run(['rm', '-rf', root], check=True)
    executed = sum(len(set().union(*[set(h.get(f, ())) for h in data['tests'].values()]))
                   for f in data['instrumented'])
    total = sum(len(v) for v in data['instrumented'].values())
    log('mutate: wrote %s: %d tests; %d of %d instrumented lines of the mutated sources '
        'executed by some test' % (os.path.relpath(COVERAGE, ROOT), len(data['tests']),
                                   executed, total))
    return 0


# Python coverage: a sitecustomize.py on PYTHONPATH traces every Python
# process a test starts (the test, the adapters it spawns, r3check's adapter
# processes, torchrun's workers) and appends each first-executed line of the
# mutated sources to OUT/PID.lines, as it happens (a killed process keeps
# what it ran).
PY_TRACER = r'''
import os, sys, threading
_out = os.environ.get("R3_MUTATE_PYCOV_OUT")
_root = os.environ.get("R3_MUTATE_PYCOV_ROOT")
if _out and _root:
    _pre = (os.path.join(_root, "engines") + os.sep, os.path.join(_root, "scripts", "fuzz_report.py"))
    _want, _seen = {}, set()
    os.makedirs(_out, exist_ok=True)

    # Opened and closed per line (once per new line, so cheap): a descriptor
    # kept open would be inherited by forks and seen by tests that compare a
    # process's open descriptors (fork_server_e2e_test's forked adapters).
    def _local(frame, event, arg):
        if event == "line":
            key = (frame.f_code.co_filename, frame.f_lineno)
            if key not in _seen:
                _seen.add(key)
                fd = os.open(os.path.join(_out, "%d.lines" % os.getpid()),
                             os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o644)
                try:
                    os.write(fd, ("%s\t%d\n" % key).encode())
                finally:
                    os.close(fd)
        return _local

    def _global(frame, event, arg):
        f = frame.f_code.co_filename
        w = _want.get(f)
        if w is None:
            w = _want[f] = os.path.realpath(f).startswith(_pre)
        return _local if w else None

    sys.settrace(_global)
    threading.settrace(_global)
'''


def py_code_lines(src, name):
    """The lines that have bytecode: a mutant elsewhere keeps every test."""
    lines, todo = set(), [compile(src, name, 'exec')]
    while todo:
        co = todo.pop()
        lines.update(ln for _, _, ln in co.co_lines() if ln)
        todo += [c for c in co.co_consts if hasattr(c, 'co_lines')]
    return lines


class PyCoverage(Coverage):
    """Which test part executed which line of the Python sources
    (--collect-py-coverage); keyed by part, so a mutant runs only the parts
    that reach its line. Same selection as Coverage, by part name."""

    @staticmethod
    def key(t):
        return t.name


def py_sources(files):
    return {p: d for p, d in mutation_sources(files).items() if p.endswith('.py')}


def load_py_coverage(tree, files):
    if not os.path.exists(PY_COVERAGE):
        return None
    with open(PY_COVERAGE) as f:
        data = json.load(f)
    if data.get('sources') != snapshot_digest(py_sources(files)):
        log('mutate: %s is for other sources; running every test of the static map '
            '(--collect-py-coverage to refresh)' % os.path.relpath(PY_COVERAGE, ROOT))
        return None
    if data.get('tree') != tree:
        log('mutate: %s was made before the tests last changed; --collect-py-coverage '
            'refreshes it' % os.path.relpath(PY_COVERAGE, ROOT))
    return PyCoverage(data)


def collect_py_coverage(args, files):
    """Runs every test (part) of PY_TESTS once on the pristine copy under the
    tracer and writes PY_COVERAGE."""
    runner = Runner(args, files)
    runner.prepare(full=True)
    wanted = {n for v in PY_TESTS.values() for n in v}
    tests = [t for t in runner.tests if t.whole in wanted]
    site = os.path.join(STATE, 'pycov-site')
    os.makedirs(site, exist_ok=True)
    with open(os.path.join(site, 'sitecustomize.py'), 'w') as f:
        f.write(PY_TRACER)
    root = os.path.join(STATE, 'pycov')
    subprocess.run(['rm', '-rf', root], check=True)
    real_work = os.path.realpath(WORK)
    data = {'tree': snapshot_digest(files), 'sources': snapshot_digest(py_sources(files)),
            'tests': {}, 'instrumented': {}, 'seconds': {}}
    for p, d in py_sources(files).items():
        data['instrumented'][p] = sorted(py_code_lines(d, p))

    def one(t):
        out = os.path.join(root, t.name.replace('/', '_'))
        t.env = dict(t.env, R3_MUTATE_PYCOV_OUT=out, R3_MUTATE_PYCOV_ROOT=real_work,
                     PYTHONPATH=site + (os.pathsep + t.env['PYTHONPATH']
                                        if t.env.get('PYTHONPATH') else ''))
        res, secs, detail = run_test(t, max(t.timeout, 60) * 4,
                                     os.path.join(LOGS, 'py-coverage-%s.txt' % t.name))
        hits = {}
        for dirpath, _, names in os.walk(out):
            for n in names:
                with open(os.path.join(dirpath, n)) as f:
                    for line in f:
                        path, _, ln = line.rstrip('\n').rpartition('\t')
                        rel = os.path.relpath(os.path.realpath(path), real_work)
                        hits.setdefault(rel, set()).add(int(ln))
        return t.name, res, detail, secs, hits

    log('mutate: Python coverage of %d test parts' % len(tests))
    for name, res, detail, secs, hits in parallel_map(one, tests, args.test_jobs):
        if res != 'pass':
            sys.exit('mutate: %s fails under the tracer (%s %s)' % (name, res, detail or ''))
        data['tests'][name] = {f: sorted(v) for f, v in hits.items() if f in data['instrumented']}
        data['seconds'][name] = round(secs, 1)
        # the pristine run is also the part's baseline (the tracer adds ~10 %)
        runner.base['seconds'].setdefault(name, round(secs, 3))
        log('mutate:   %s: %.0f s, %d lines' % (name, secs, sum(map(len, data['tests'][name].values()))))
    # a whole test's baseline (--no-parts) is the sum of its parts'
    for whole in {t.whole for t in tests if t.whole != t.name}:
        parts = [t.name for t in tests if t.whole == whole]
        if all(n in data['seconds'] for n in parts):
            runner.base['seconds'].setdefault(whole, round(sum(data['seconds'][n] for n in parts), 3))
    runner.save_base()
    with open(PY_COVERAGE, 'w') as f:
        json.dump(data, f)
    total = sum(len(v) for v in data['instrumented'].values())
    hit = sum(len(set().union(*[set(h.get(p, ())) for h in data['tests'].values()])
                  & set(v)) for p, v in data['instrumented'].items())
    log('mutate: wrote %s: %d of %d Python lines with bytecode executed by some test'
        % (os.path.relpath(PY_COVERAGE, ROOT), hit, total))
    return 0


def restore_journal():
    """--in-place: puts back a file left mutated by a run that was killed."""
    if not os.path.exists(JOURNAL):
        return
    with open(JOURNAL) as f:
        j = json.load(f)
    write_file(j['file'], base64.b64decode(j['data']))
    os.remove(JOURNAL)
    log('mutate: restored %s, left mutated by an interrupted run' % j['file'])


def hints_from(records):
    hints = {}
    for r in records:
        if r.get('status') in ('killed', 'timeout') and r.get('killer'):
            h = hints.setdefault(r['file'], {})
            h[r['killer']] = h.get(r['killer'], 0) + 1
    return hints


def latest(records):
    """The last record of each mutant (id and file contents)."""
    out = {}
    for r in records:
        if r.get('status'):
            out[(r['id'], r.get('file_sha'))] = r
    return out


def pick_sample(muts, n, seed):
    """A reproducible sample of n mutants, spread over the folders in
    proportion to their counts (at least 2 per folder)."""
    rng = random.Random(seed)
    by_scope = {}
    for m in sorted(muts, key=lambda m: m.id):
        by_scope.setdefault(m.folder(), []).append(m)
    total = len(muts)
    quota = {s: max(min(2, len(v)), round(n * len(v) / total)) for s, v in by_scope.items()}
    while sum(quota.values()) > n:
        s = max(quota, key=lambda s: quota[s])
        quota[s] -= 1
    picked = []
    for s in sorted(by_scope):
        picked += rng.sample(by_scope[s], min(quota[s], len(by_scope[s])))
    return picked


def run_order(muts, seed):
    """Files in a seeded random order (so a time-bounded run spreads over the
    folders), mutants of a file together (fewer rebuilds)."""
    rng = random.Random(seed)
    files = sorted({m.file for m in muts})
    rng.shuffle(files)
    rank = {f: i for i, f in enumerate(files)}
    # headers last: each rebuilds every TU that includes it (minutes, not
    # seconds), so a time-bounded run first covers the many cheap mutants
    return sorted(muts, key=lambda m: (m.file.endswith('.h'), rank[m.file], m.offset, m.op,
                                       m.replacement))


# --------------------------------------------------------------------------
# Report.

STATUSES = ['killed', 'timeout', 'survived', 'equivalent', 'build-error']


def report(records, current, equivalents, tree=None, out=sys.stdout):
    """Markdown summary by folder of the latest result of each mutant of the
    current sources: the mutated file's contents must be the same; the rest of
    the tree may have moved on since (new tests only add kills, so a kill
    recorded on an earlier tree is counted, and said so)."""
    cur = {(m.id, m.file_sha) for m in current}
    rows = {}
    stale = 0
    older = 0
    survivors = []
    for r in latest(records).values():
        if (r['id'], r.get('file_sha')) not in cur:
            stale += 1
            continue
        status = r['status']
        older += 1 if tree is not None and r.get('tree', tree) != tree else 0
        if r['id'] in equivalents:
            status = 'equivalent'
        rows.setdefault(scope_of(r['file']), {s: 0 for s in STATUSES})[status] += 1
        if status == 'survived':
            survivors.append(r)
    totals = {s: 0 for s in STATUSES}
    print('| folder | mutants | killed | survived | equivalent | build errors | timeouts '
          '| score |', file=out)
    print('|---|---:|---:|---:|---:|---:|---:|---:|', file=out)

    def line(name, c):
        total = sum(c.values())
        denom = total - c['equivalent'] - c['build-error']
        killed = c['killed'] + c['timeout']
        score = '%.0f %%' % (100.0 * killed / denom) if denom else 'n/a'
        print('| %s | %d | %d | %d | %d | %d | %d | %s |' % (
            name, total, killed, c['survived'], c['equivalent'], c['build-error'],
            c['timeout'], score), file=out)
    for s in SCOPES:
        if s in rows:
            line('`%s`' % s, rows[s])
            for k in STATUSES:
                totals[k] += rows[s][k]
    line('**all**', totals)
    print('\nkilled includes timeouts; score = killed / (mutants - equivalent - build errors).',
          file=out)
    print('\n%d of %d current mutants have a result (%d not run yet); %d of the results were '
          'recorded on an earlier tree with the same file contents.'
          % (sum(sum(c.values()) for c in rows.values()), len(cur),
             len(cur) - sum(sum(c.values()) for c in rows.values()), older), file=out)
    if stale:
        print('(%d recorded results are for mutants that the current sources no longer '
              'generate; not counted.)' % stale, file=out)
    if survivors:
        print('\nSurvivors:\n', file=out)
        for r in sorted(survivors, key=lambda r: (r['file'], r['line'])):
            print('- `%s` %s:%d %s `%s` -> `%s`' % (
                r['id'], r['file'], r['line'], r['op'], ' '.join(r['original'].split())[:70],
                ' '.join(r['replacement'].split())[:70]), file=out)


# --------------------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--list', action='store_true', help='print the mutants, do not run them')
    ap.add_argument('--report', action='store_true', help='print the summary table (Markdown)')
    ap.add_argument('--ci', action='store_true',
                    help='run the mutants of scripts/mutation_ci_sample.txt; exit 1 if one '
                    'survives or is not found')
    ap.add_argument('--ids', nargs='+', metavar='ID', help='run these mutants')
    ap.add_argument('--paths', nargs='+', metavar='PATH',
                    help='only mutants of files under these paths')
    ap.add_argument('--ops', nargs='+', metavar='OP', help='only these operators')
    ap.add_argument('--sample', type=int, metavar='N', help='a random sample of N mutants')
    ap.add_argument('--seed', type=int, default=1)
    ap.add_argument('--max-minutes', type=float, help='start no mutant after this long')
    ap.add_argument('--resume', dest='resume', action='store_true', default=True,
                    help='skip mutants already recorded for the same file contents (default)')
    ap.add_argument('--no-resume', dest='resume', action='store_false')
    ap.add_argument('--rev', help='test this commit instead of the working tree')
    ap.add_argument('--in-place', action='store_true',
                    help='mutate the checkout itself and use its build dir (--build-dir) '
                    'instead of the scratch copy: for a throw-away clone such as CI\'s')
    ap.add_argument('--build-dir', default='build',
                    help='with --in-place: the configured build dir (default build)')
    ap.add_argument('--pick-ci', type=int, metavar='N',
                    help='write N killed mutants of results.json, spread over the folders, '
                    'to scripts/mutation_ci_sample.txt')
    ap.add_argument('--suite', action='append', metavar='NAME',
                    help='run this Meson suite (repeatable; default: %s)' % ' '.join(SUITES))
    ap.add_argument('--skip-test', action='append', default=[], metavar='NAME',
                    help='leave this test out (one that fails on the pristine copy); '
                    'repeatable')
    ap.add_argument('--test', action='append', metavar='NAME',
                    help='run only this test (repeatable; for trying the tool itself)')
    ap.add_argument('--jobs', type=int, default=1, help='ninja -j (default 1)')
    ap.add_argument('--test-jobs', type=int, default=1,
                    help='tests run at once in the baseline and --collect-coverage (default 1)')
    ap.add_argument('--collect-coverage', action='store_true',
                    help='record which test executes which line (a -Db_coverage build in '
                    '.mutate/work/covbuild); later runs then skip the tests that never reach '
                    'a mutant\'s line')
    ap.add_argument('--collect-py-coverage', action='store_true',
                    help='record which test part executes which line of the Python sources '
                    '(a tracer in every Python process the tests start)')
    ap.add_argument('--no-parts', action='store_true',
                    help='run the slow tests whole (TEST_PARTS), in suite order, as before '
                    'issue 23 (for measuring the speed-up)')
    ap.add_argument('--no-coverage', action='store_true',
                    help='run every affected test even when a coverage map exists')
    ap.add_argument('--survivors', action='store_true',
                    help='only mutants with no kill recorded for their current file contents '
                    '(after adding tests: re-run what survived)')
    ap.add_argument('--shard', metavar='K/N',
                    help='run only the K-th of N interleaved parts of the selection (0-based; '
                    'one per worker of a parallel run, each in its own copy of the tree)')
    ap.add_argument('--file-list', metavar='FILE',
                    help='the tree\'s files, one per line, for a copy without .git '
                    '(write it with --write-file-list)')
    ap.add_argument('--write-file-list', metavar='FILE',
                    help='write the tree\'s files (git ls-files) to FILE and exit')
    ap.add_argument('--merge', nargs='+', metavar='RESULTS',
                    help='append the records of these results.json files (parallel workers) '
                    'to .mutate/results.json and exit')
    ap.add_argument('--timeout-factor', type=float, default=5.0,
                    help='a test times out after this many times its baseline (default 5)')
    ap.add_argument('--min-test-timeout', type=float, default=20.0)
    ap.add_argument('--build-timeout', type=float, default=900.0)
    args = ap.parse_args()
    global WORK, BUILD, FILE_LIST
    FILE_LIST = args.file_list and os.path.abspath(args.file_list)
    if args.merge:
        records = load_results(RESULTS)
        seen = {json.dumps(r, sort_keys=True) for r in records}
        for path in args.merge:
            for r in load_results(path):  # a worker's file repeats what it was given
                key = json.dumps(r, sort_keys=True)
                if key not in seen:
                    seen.add(key)
                    records.append(r)
        os.makedirs(STATE, exist_ok=True)
        save_results(RESULTS, records)
        log('mutate: %s now holds %d records' % (os.path.relpath(RESULTS, ROOT), len(records)))
        return 0
    if args.in_place:
        if args.rev:
            sys.exit('mutate: --in-place tests the working tree; leave out --rev')
        WORK = ROOT
        BUILD = os.path.join(ROOT, args.build_dir)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # `--list | head`

    files = source_files(args.rev)
    if args.write_file_list:
        with open(args.write_file_list, 'w') as f:
            f.write(''.join(p + '\n' for p in sorted(files)))
        return 0
    if args.collect_coverage:
        return collect_coverage(args, files)
    if args.collect_py_coverage:
        return collect_py_coverage(args, files)
    muts = all_mutants(files)
    if args.paths:
        ps = [p.rstrip('/') for p in args.paths]
        muts = [m for m in muts if any(m.file == p or m.file.startswith(p + '/') for p in ps)]
    if args.ops:
        muts = [m for m in muts if m.op in args.ops]
    equivalents = load_id_file(EQUIVALENTS)

    if args.report:
        report(load_results(RESULTS), muts, equivalents, snapshot_digest(files))
        return 0

    if args.pick_ci:
        return pick_ci(load_results(RESULTS), muts, args.pick_ci, args.seed)

    first = {}
    if args.ci:
        sample = load_id_file(CI_SAMPLE)
        wanted = list(sample)
        first = {i: (sample[i].split() or [None])[0] for i in wanted}
        by_id = {m.id: m for m in muts}
        missing = [i for i in wanted if i not in by_id]
        if missing:
            print('mutate --ci: %d id(s) of %s are not mutants of the current sources '
                  '(stale sample; pick a new one from a full run): %s'
                  % (len(missing), os.path.relpath(CI_SAMPLE, ROOT), ' '.join(missing)))
            return 1
        if not wanted:
            print('mutate --ci: %s lists no mutants' % os.path.relpath(CI_SAMPLE, ROOT))
            return 1
        selected = [by_id[i] for i in wanted]
        results_path, resume = CI_RESULTS, False
    else:
        selected = muts
        if args.ids:
            by_id = {m.id: m for m in muts}
            missing = [i for i in args.ids if i not in by_id]
            if missing:
                sys.exit('mutate: unknown mutant id(s): ' + ' '.join(missing))
            selected = [by_id[i] for i in args.ids]
        elif args.sample:
            selected = pick_sample(muts, args.sample, args.seed)
        if args.survivors:
            killed = {k for k, r in latest(load_results(RESULTS)).items()
                      if r['status'] in ('killed', 'timeout', 'build-error')}
            selected = [m for m in selected if (m.id, m.file_sha) not in killed
                        and m.id not in equivalents]
        results_path, resume = RESULTS, args.resume

    if args.list:
        counts = {}
        for m in selected:
            counts.setdefault(m.folder(), {}).setdefault(m.op, 0)
            counts[m.folder()][m.op] += 1
        for m in sorted(selected, key=lambda m: (m.file, m.offset, m.op)):
            print('%s %s:%d:%d %s' % (m.id, m.file, m.line, m.col, m.describe()))
        ops = sorted({m.op for m in selected})
        print('\n| folder | ' + ' | '.join(ops) + ' | total |')
        print('|---|' + '---:|' * (len(ops) + 1))
        for s in SCOPES:
            if s in counts:
                c = counts[s]
                print('| `%s` | %s | %d |' % (s, ' | '.join(str(c.get(o, 0)) for o in ops),
                                              sum(c.values())))
        print('| **all** | %s | %d |' % (' | '.join(
            str(sum(c.get(o, 0) for c in counts.values())) for o in ops), len(selected)))
        return 0

    t0 = time.time()
    os.makedirs(STATE, exist_ok=True)
    records = load_results(results_path) if not args.ci else []
    # Resume: a mutant is done when recorded for the same file contents and
    # the same tree (other files, the tests among them, decide a kill too).
    tree = snapshot_digest(files)
    done = {(r['id'], r.get('file_sha')) for r in records
            if r.get('status') and r.get('tree', tree) == tree}
    todo = [m for m in selected if not (resume and (m.id, m.file_sha) in done)]
    if len(todo) < len(selected):
        log('mutate: %d of %d already recorded (--no-resume to redo)'
            % (len(selected) - len(todo), len(selected)))
    runner = Runner(args, files)
    runner.prepare(full=not args.ci)
    if not args.ci:
        runner.coverage = None if args.no_coverage else load_coverage(tree, files)
        runner.py_coverage = None if args.no_coverage else load_py_coverage(tree, files)
    hints = hints_from(load_results(RESULTS))
    if args.ci:
        # Only the tests the sample names, each checked on the pristine copy.
        needed = {}
        for m in todo:
            for t in runner.order(m, hints, first.get(m.id))[:1]:
                needed[t.name] = t
        runner.baseline(list(needed.values()))
    else:
        runner.baseline(runner.tests)
    todo = run_order(todo, args.seed) if not args.ci else todo
    if args.shard:
        k, n = (int(x) for x in args.shard.split('/'))
        if not 0 <= k < n:
            sys.exit('mutate: --shard K/N needs 0 <= K < N')
        todo = todo[k::n]
    failures = []
    ran = 0
    for k, m in enumerate(todo):
        if args.max_minutes is not None and time.time() - t0 > args.max_minutes * 60:
            log('mutate: --max-minutes reached; %d mutant(s) left (resume runs them)'
                % (len(todo) - k))
            break
        rec = runner.run_one(m, hints, first.get(m.id))
        rec['tree'] = tree
        ran += 1
        records.append(rec)
        save_results(results_path, records)
        log('[%d/%d] %s %s:%d %s: %s%s (%.0f s)' % (
            k + 1, len(todo), m.id, m.file, m.line, m.describe(), rec['status'],
            ' by ' + rec['killer'] + (' (' + rec['detail'] + ')' if rec['detail'] else '')
            if rec['killer'] else '', rec['seconds']))
        if args.ci and rec['status'] not in ('killed', 'timeout'):
            failures.append(rec)
    elapsed = time.time() - t0
    log('mutate: %d mutant(s) in %.0f s' % (ran, elapsed))
    if args.ci:
        if failures:
            for r in failures:
                print('mutate --ci: %s %s:%d %s -> %s: %s' % (
                    r['id'], r['file'], r['line'], r['original'], r['replacement'],
                    r['status']))
            # A killed mutant is a passed check, a surviving one a failed one.
            print('mutation: %d passed, %d failed' % (len(todo) - len(failures), len(failures)))
            return 1
        print('mutate --ci: all %d mutants killed in %.0f s' % (len(todo), elapsed))
        print('mutation: %d passed, 0 failed' % len(todo))
        return 0
    report(records, muts, equivalents, tree)
    return 0


if __name__ == '__main__':
    sys.exit(main())
