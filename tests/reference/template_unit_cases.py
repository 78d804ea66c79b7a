#!/usr/bin/env python3
"""Unit cases of Kestrel's Jinja interpreter, with outputs from Python jinja2.

Each case is (name, template, variables as JSON). This script renders them with jinja2
configured as transformers configures it (template_reference.make_environment) and prints
the C++ rows of tests/engine/template/jinja_cases.inc:
  {name, template, variables, expected output or "ExceptionType: message", is_error}
Regenerate after editing CASES:
  python3 tests/reference/template_unit_cases.py > tests/engine/template/jinja_cases.inc
"""
import json
import os
import sys

CASES = [
 ("print_none_bool", "{{ none }} {{ true }} {{ False }} {{ x }}|", '{}'),
 ("print_numbers", "{{ 1 }} {{ -7 }} {{ 1.0 }} {{ 0.1 }} {{ 1e16 }} {{ 1e15 }} {{ 1.5e-5 }} {{ 0.0001 }} {{ 2.5e-7 }} {{ 123456789.123 }} {{ 1/3 }} {{ -0.0 }}", '{}'),
 ("print_list_dict_repr", "{{ [1, 'a', none, true, 2.5, [\"x\"]] }} {{ {'k': 'v', 'n': {'m': [1]}} }} {{ (1,) }} {{ (1, 'b') }} {{ () }}", '{}'),
 ("print_string_repr_quotes", "{{ [\"it's\", 'say \"hi\"', 'both \\' \"', 'tab\\there', 'nl\\n', 'back\\\\slash', 'é中🙂', '\\x01'] }}", '{}'),
 ("print_json_values", "{{ m }} {{ m.items() | list }}", '{"m": {"a": 1, "b": [true, null, 1.5, "s"]}}'),
 ("arith", "{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 2 ** -1 }} {{ 1 + 2 * 3 - 4 }} {{ 7.5 // 2 }} {{ -7.5 % 2 }} {{ true + 1 }}", '{}'),
 ("concat_tilde", "{{ 'a' ~ 1 ~ none ~ undefined_var ~ [1] }}", '{}'),
 ("string_ops", "{{ 'ab' * 3 }} {{ [1] * 2 }} {{ 'x' in 'xyz' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 3 not in [1] }} {{ 'abc' < 'abd' }} {{ [1, 2] < [1, 3] }} {{ 1 < 2 < 3 }} {{ 1 == 1.0 }}", '{}'),
 ("logic", "{{ 0 or 'x' }} {{ 1 and 'y' }} {{ not [] }} {{ none or [] }} {{ 'a' if false }}|{{ 'a' if 1 else 'b' }}", '{}'),
 ("slicing", "{{ s[1:] }} {{ s[:-1] }} {{ s[::-1] }} {{ s[::2] }} {{ xs[1:3] }} {{ xs[-2:] }} {{ xs[::-1] }} {{ xs[5:] }} {{ s[-1] }} {{ xs[10] }}|{{ s[1:-1:2] }} {{ xs[3:0:-1] }}", '{"s": "héllo wörld", "xs": [1, 2, 3, 4, 5]}'),
 ("whitespace_control", "a  {{- ' b ' -}}  c\n  {%- if true %}  d  {% endif -%}\n e {#- c -#} f", '{}'),
 ("trim_lstrip_blocks", "<ul>\n    {% for x in xs %}\n    <li>{{ x }}</li>\n    {% endfor %}\n</ul>\n  {# comment #}\nend {% if true %}yes{% endif %}\n  {%+ if true %}keep{% endif %}\n", '{"xs": [1, 2]}'),
 ("trailing_newline_dropped", "line\n\n", '{}'),
 ("crlf_source", "a\r\n{% if true %}\r\nb\r\n{% endif %}\r\nc", '{}'),
 ("raw_block", "{% raw %}{{ not evaluated }} {% if %}{% endraw %}!", '{}'),
 ("loop_vars", "{% for x in 'abc' %}{{ loop.index }}{{ loop.index0 }}{{ loop.revindex }}{{ loop.revindex0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.cycle('o', 'e') }};{% endfor %}", '{}'),
 ("loop_filter_else", "{% for x in xs if x > 2 %}{{ x }}{{ loop.last }},{% else %}none{% endfor %}|{% for x in [] %}x{% else %}empty{% endfor %}", '{"xs": [1, 3, 2, 5]}'),
 ("loop_dict_items", "{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}{% for k in d %}{{ k }}{% endfor %}{% for a, b in [[1, 2], (3, 4)] %}{{ a + b }}{% endfor %}", '{"d": {"z": 1, "a": 2}}'),
 ("loop_controls", "{% for i in range(10) %}{% if i == 2 %}{% continue %}{% endif %}{% if i == 5 %}{% break %}{% endif %}{{ i }}{% endfor %}", '{}'),
 ("loop_scope", "{% set x = 1 %}{% for i in [1, 2] %}{% set x = x + i %}{{ x }}{% endfor %}|{{ x }}", '{}'),
 ("loop_scope_per_iteration", "{% for i in [1, 2, 3] %}{% if loop.first %}{% set y = 5 %}{% endif %}[{{ y }}]{% endfor %}{% set y = 1 %}{% for i in [1, 2] %}{% if loop.first %}{% set y = 5 %}{% endif %}[{{ y }}]{% endfor %}{{ y }}", '{}'),
 ("nested_loops", "{% for a in [1, 2] %}{% for b in 'xy' %}{{ loop.index }}{{ b }}{% endfor %}{{ loop.index }}|{% endfor %}", '{}'),
 ("namespace", "{% set ns = namespace(n=0, s='') %}{% for i in range(4) %}{% set ns.n = ns.n + i %}{% set ns.s = ns.s ~ i %}{% endfor %}{{ ns.n }} {{ ns.s }}", '{}'),
 ("set_block_and_filter", "{% set body %}  Hello {{ name }}  {% endset %}[{{ body }}]{% set t | trim | upper %}  x y  {% endset %}[{{ t }}]{% filter upper %}abc{{ 'd' }}{% endfilter %}", '{"name": "Ann"}'),
 ("set_tuple", "{% set a, b = 1, 2 %}{{ a }}{{ b }}{% set c = 1, 2 %}{{ c }}", '{}'),
 ("macro_defaults_kwargs", "{% macro greet(name, greeting='Hello', punct='!') %}{{ greeting }}, {{ name }}{{ punct }}{% endmacro %}{{ greet('Bo') }} {{ greet('Al', punct='?') }} {{ greet(greeting='Hi', name='Cy') }}", '{}'),
 ("macro_recursion", "{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1) | int }}{% endif %}{% endmacro %}{{ fact(6) }}", '{}'),
 ("macro_scope", "{% set g = 'G' %}{% macro m() %}{{ g }}{% set g = 'L' %}{{ g }}{% endmacro %}{{ m() }}{{ g }}", '{}'),
 ("call_block", "{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}{% call wrap('b') %}bold {{ 1 + 1 }}{% endcall %}", '{}'),
 ("generation_block", "{% for m in messages %}{% if m.role == 'assistant' %}{% generation %}{{ m.content }}{% endgeneration %}{% else %}{{ m.content }}{% endif %}|{% endfor %}", '{"messages": [{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}]}'),
 ("undefined_behaviour", "[{{ missing }}][{{ d.nope }}][{{ d['nope'] }}][{{ missing is defined }}][{{ d.nope is undefined }}][{{ missing | default('dflt') }}][{{ '' | default('e', true) }}][{{ missing | length }}][{{ missing == missing }}][{% for x in missing %}x{% endfor %}][{{ not missing }}]", '{"d": {"a": 1}}'),
 ("attribute_vs_item", "{{ d.a }} {{ d['a'] }} {{ xs.0 }} {{ d.get('a') }} {{ d.get('zz', 'dv') }} {{ d.get('zz') }} {{ d.keys() | list }} {{ d.values() | list }}", '{"d": {"a": 1, "b": 2}, "xs": [9]}'),
 ("tests", "{{ 1 is number }}{{ 1.5 is float }}{{ 1 is integer }}{{ true is integer }}{{ true is boolean }}{{ 's' is string }}{{ {} is mapping }}{{ [] is iterable }}{{ 's' is sequence }}{{ none is none }}{{ 3 is odd }}{{ 4 is even }}{{ 9 is divisibleby 3 }}{{ 9 is divisibleby(4) }}{{ 2 is equalto 2 }}{{ 2 is eq(3) }}{{ x is not none }}{{ 1 is in [1] }}{{ true is true }}{{ 0 is false }}{{ 'ab' is lower }}{{ 3 is gt 2 }}{{ 3 is le 2 }}", '{"x": null}'),
 ("filters_text", "{{ '  a b  ' | trim }}|{{ 'xxhixx' | trim('x') }}|{{ 'hello world' | title }}|{{ 'hELLO' | capitalize }}|{{ 'abc' | upper }}|{{ 'ÀÉÎ' | lower }}|{{ 'a-b-c' | replace('-', '+') }}|{{ 'aaa' | replace('a', 'b', 2) }}|{{ 'ab' | replace('', '.') }}|{{ 'one two  three' | wordcount }}|{{ '<a href=\"x\">&</a>' | e }}|{{ 'x' | safe }}|{{ 'abc' | reverse }}|{{ 'abc' | list }}|{{ 42 | string }}|{{ 'éa' | length }}|{{ 'abc' | center(9) }}", '{}'),
 ("filters_numbers", "{{ '42' | int }} {{ '4.7' | int }} {{ 'x' | int }} {{ 'x' | int(7) }} {{ 3.9 | int }} {{ '1.5' | float }} {{ 2 | float }} {{ -3 | abs }} {{ 2.5 | round }} {{ 3.5 | round }} {{ 2.567 | round(2) }} {{ 2.1 | round(0, 'ceil') }} {{ 7 | round }} {{ [1, 2, 3.5] | sum }} {{ [3, 1, 2] | min }} {{ [3, 1, 2] | max }}", '{}'),
 ("filters_lists", "{{ xs | join(', ') }}|{{ xs | first }}|{{ xs | last }}|{{ xs | length }}|{{ xs | count }}|{{ xs | reverse | list }}|{{ xs | sort }}|{{ xs | sort(reverse=true) }}|{{ ['b', 'A', 'c'] | sort }}|{{ ['b', 'A', 'c'] | sort(case_sensitive=true) }}|{{ [1, 2, 1, 3] | unique | list }}|{{ xs | batch(2) | list }}|{{ xs | select('odd') | list }}|{{ xs | reject('odd') | list }}|{{ xs | map('string') | join }}|{{ [0, 1, '', 'a'] | select | list }}", '{"xs": [3, 1, 2, 5]}'),
 ("filters_attr", "{{ ms | map(attribute='role') | list }}|{{ ms | selectattr('role', 'equalto', 'user') | map(attribute='content') | join('+') }}|{{ ms | rejectattr('role', 'eq', 'user') | list | length }}|{{ ms | selectattr('tool') | list | length }}|{{ ms | sort(attribute='content') | map(attribute='content') | join }}|{{ ms | map(attribute='f.n') | list }}|{{ ms | unique(attribute='role') | list | length }}|{{ ms | join(',', attribute='content') }}", '{"ms": [{"role": "user", "content": "b", "f": {"n": 1}}, {"role": "assistant", "content": "a", "tool": true, "f": {"n": 2}}, {"role": "user", "content": "c", "f": {"n": 3}}]}'),
 ("filters_dict", "{{ d | items | list }}|{{ d | dictsort }}|{{ d | dictsort(by='value', reverse=true) }}|{{ d | length }}|{{ d | list }}|{{ d | first }}", '{"d": {"b": 2, "a": 3, "c": 1}}'),
 ("tojson", "{{ v | tojson }}|{{ v | tojson(indent=2) }}|{{ v | tojson(separators=(',', ':')) }}|{{ v | tojson(sort_keys=true) }}|{{ 'é\"\\n' | tojson }}|{{ 'é' | tojson(ensure_ascii=true) }}|{{ [] | tojson(indent=2) }}|{{ {'e': {}} | tojson(indent='\\t') }}|{{ 1.0 | tojson }}|{{ none | tojson }}", '{"v": {"z": [1, 2.5, true, null], "a": "x/y", "n": {"k": "🙂"}}}'),
 ("indent_filter", "{{ 'a\\nb\\n\\nc' | indent }}|{{ 'a\\nb' | indent(2, true) }}|{{ 'a\\n\\nb' | indent(width='> ', blank=true) }}", '{}'),
 ("string_methods", "{{ s.startswith('He') }} {{ s.endswith(('x', 'd!')) }} {{ s.strip('!H') }} {{ '  x '.lstrip() }}| {{ '  x '.rstrip() }}| {{ s.split() }} {{ 'a,b,,c'.split(',') }} {{ 'a,b,c'.split(',', 1) }} {{ 'a b c'.rsplit(' ', 1) }} {{ s.upper() }} {{ s.lower() }} {{ 'ab cd'.title() }} {{ 'aBC'.capitalize() }} {{ s.replace('l', 'L') }} {{ s.find('o') }} {{ s.rfind('o') }} {{ s.find('z') }} {{ s.count('l') }} {{ 'a\\nb\\r\\nc'.splitlines() }} {{ '-'.join(['a', 'b']) }} {{ '12'.isdigit() }} {{ 'ab'.isalpha() }} {{ ' '.isspace() }} {{ 'AB'.isupper() }} {{ s.removeprefix('Hel') }} {{ 'x'.ljust(3, '.') }}|", '{"s": "Hello World!"}'),
 ("percent_format", "{{ '%s has %d items' % ('cart', 3) }}|{{ '%5.2f|%-4s|%03d|%%|%r' % (3.14159, 'ab', 7, 'q') }}|{{ '%s' % 'one' }}|{{ '%(a)s-%(b)s' % {'a': 1, 'b': 2} }}|{{ '%s and %s' | format('x', 'y') }}", '{}'),
 ("str_format", "{{ '{} + {} = {}'.format(1, 2, 3) }}|{{ '{1}{0}'.format('a', 'b') }}|{{ 'Hi {name}!'.format(name='Zoë') }}|{{ '{{literal}}'.format() }}", '{}'),
 ("error_percent_too_few", "{{ '%s %s' % ('a',) }}", '{}'),
 ("string_escapes", "{{ 'tab\\tnl\\nq\\'u\\u00e9x\\x41\\101' }}|{{ \"dq \\\"in\\\"\" }}|{{ 'unknown \\d escape' }}|{{ 'adjacent' 'strings' }}", '{}'),
 ("dict_literals", "{% set d = {'a': 1, 'b': [1, {'c': none}]} %}{{ d.b[1].c }}|{{ d | tojson }}|{{ dict(x=1, y='z') }}|{{ {'a': 1} == {'a': 1} }}|{{ {'a': 1, 'b': 2} == {'b': 2, 'a': 1} }}", '{}'),
 ("message_equality", "{% for m in ms %}{{ m == ms[-1] }}{% endfor %}", '{"ms": [{"role": "user", "content": "x"}, {"role": "user", "content": "y"}, {"role": "user", "content": "x"}]}'),
 ("strip_unicode_whitespace", "[{{ s | trim }}][{{ s.strip() }}][{{ s.split() }}]", '{"s": "\\u3000 x\\u00a0y \\n"}'),
 ("range_forms", "{{ range(3) | list }} {{ range(1, 7, 2) | list }} {{ range(5, 0, -2) | list }} {{ range(0) | list }}", '{}'),
 ("error_concat_binds_tighter_than_plus", "{{ 1 + 2 ~ 3 }}", '{}'),
 ("precedence", "{{ (1 + 2) ~ 3 * 2 }} {{ -2 ** 2 }} {{ 2 ** 3 ** 2 }} {{ not 1 == 2 }} {{ -x | abs }} {{ 10 - 2 - 3 }} {{ 2 * 3 % 4 }}", '{"x": 5}'),
 ("error_raise_exception", "a{{ raise_exception('Bad role: ' ~ r) }}", '{"r": "robot"}'),
 ("error_undefined_attribute", "{{ missing.attr }}", '{}'),
 ("error_undefined_arith", "{{ missing + 1 }}", '{}'),
 ("error_type_concat", "{{ 'a' + 1 }}", '{}'),
 ("error_list_append_unsafe", "{% set xs = [] %}{{ xs.append(1) }}", '{}'),
 ("error_unknown_filter", "{{ 1 | frobnicate }}", '{}'),
 ("error_unknown_tag", "{% frob %}", '{}'),
 ("error_unclosed_if", "{% if true %}x", '{}'),
 ("error_division_by_zero", "{{ 1 // 0 }}", '{}'),
 ("error_none_not_iterable", "{% for x in none %}{% endfor %}", '{}'),
 ("error_compare_types", "{{ 1 < 'a' }}", '{}'),
 ("error_range_too_big", "{{ range(200000) | length }}", '{}'),
 ("error_tojson_undefined", "{{ missing | tojson }}", '{}'),
]


def cstr(s):
    out = []
    for b in s.encode("utf-8"):
        c = chr(b)
        if c == "\\":
            out.append("\\\\")
        elif c == '"':
            out.append('\\"')
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\t":
            out.append("\\t")
        elif 32 <= b < 127 and c != "?":
            out.append(c)
        else:
            out.append("\\%03o" % b)
    return '"' + "".join(out) + '"'


def main():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import template_reference

    env, _ = template_reference.make_environment()
    print("// Generated by tests/reference/template_unit_cases.py from Python jinja2 3.1.6; do not edit.")
    for name, tmpl, variables in CASES:
        try:
            out, err = env.from_string(tmpl).render(**json.loads(variables)), False
        except Exception as e:  # the expected error, recorded by type and message
            out, err = f"{type(e).__name__}: {e}", True
        print(f"{{{cstr(name)}, {cstr(tmpl)}, {cstr(variables)}, {cstr(out)}, {'true' if err else 'false'}}},")


if __name__ == "__main__":
    main()
