import { expect } from 'chai';
import { EncodedForms } from '../../gateway/encodedforms.js';

/** Items whose JSON and encoding are 10 characters and 10 bytes each: 20 bytes of budget. */
const item = (i: number) => `item-${String(i).padStart(5, '0')}`;

/** Reads `jsons` as one list; how many had to be encoded. */
function list(forms: EncodedForms, jsons: string[]): number {
  let encoded = 0;
  forms.startRound();
  for (const json of jsons) {
    const bytes = forms.get(json, 'f', (j) => { encoded++; return Buffer.from(j.toUpperCase()); });
    expect(bytes.toString()).to.equal(json.toUpperCase());
  }
  return encoded;
}

describe('encoded forms of listed objects', () => {
  it('encodes an object once while it is read again, and again in another form', () => {
    const forms = new EncodedForms(1000);
    const jsons = Array.from({ length: 10 }, (_, i) => item(i));
    expect(list(forms, jsons)).to.equal(10);
    expect(list(forms, jsons)).to.equal(0);
    let encoded = 0;
    forms.get(jsons[0], 'other', (j) => { encoded++; return Buffer.from(j); });
    expect(encoded).to.equal(1);
  });

  it('a list larger than the budget keeps finding the part that fits, list after list', () => {
    const forms = new EncodedForms(10 * 20); // 10 items
    const jsons = Array.from({ length: 25 }, (_, i) => item(i));
    expect(list(forms, jsons)).to.equal(25);
    expect(list(forms, jsons)).to.equal(15);
    expect(list(forms, jsons)).to.equal(15);
  });

  it('evicts forms of changed objects before those still listed', () => {
    const forms = new EncodedForms(10 * 20);
    const first = Array.from({ length: 10 }, (_, i) => item(i));
    expect(list(forms, first)).to.equal(10);
    // Five objects changed: their new forms take the room of their old ones, not of the five unchanged.
    const changed = first.map((json, i) => (i < 5 ? item(i + 500) : json));
    expect(list(forms, changed)).to.equal(5);
    expect(list(forms, changed)).to.equal(0);
  });
});
