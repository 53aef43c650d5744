import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { compile, CompileError, EvalError, stringifyValue } from '../../internal/cel/index.js';

interface Case {
  name: string;
  expr: string;
  value?: unknown;
  /** The expected value is an int beyond JSON's safe range, written as its digits. */
  bigint?: boolean;
  compileError?: string;
  evalError?: string;
}

const data: { sections: Array<{ name: string; tests: Case[] }> } = JSON.parse(
  readFileSync(new URL('../../../test/unit/testdata/cel/conformance.json', import.meta.url), 'utf8'));

function outcome(expr: string): { value?: string; compileError?: string; evalError?: string } {
  try {
    return { value: stringifyValue(compile(expr).evaluate({}).value) };
  } catch (err) {
    if (err instanceof CompileError) return { compileError: err.message };
    if (err instanceof EvalError) return { evalError: err.message };
    throw err;
  }
}

describe('cel conformance', () => {
  for (const section of data.sections) {
    describe(section.name, () => {
      for (const t of section.tests) {
        it(`${t.name}: ${t.expr}`, () => {
          const got = outcome(t.expr);
          if (t.compileError !== undefined) expect(got.compileError).to.include(t.compileError);
          else if (t.evalError !== undefined) expect(got.evalError).to.include(t.evalError);
          else if (t.bigint) expect(got.value).to.equal(t.value);
          else expect(got.value === undefined ? got : JSON.parse(got.value)).to.deep.equal(t.value);
        });
      }
    });
  }
});
