import { expect } from 'chai';
import { nowTimestamp } from '../../internal/apimachinery/meta.js';

describe('apimachinery timestamps', () => {
  it('nowTimestamp is the current second in RFC 3339, and follows the clock from one second to the next', async () => {
    const before = Math.floor(Date.now() / 1000) * 1000;
    const first = nowTimestamp();
    expect(first).to.match(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    expect(Date.parse(first)).to.be.within(before, Date.now());
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const later = Date.parse(nowTimestamp());
    expect(later - Date.parse(first)).to.be.at.least(1000);
    expect(later).to.be.at.most(Date.now());
  });
});
