import { chooseInfraMode } from '../../support/containers.ts';

describe('test infrastructure choice', () => {
  it('uses containers only where Docker answers and no servers are named', () => {
    expect(chooseInfraMode({}, true)).toBe('containers');
    expect(chooseInfraMode({}, false)).toBe('local');
    expect(chooseInfraMode({ MONGO_URL: 'mongodb://db/x' }, true)).toBe('local');
  });
  it('obeys TEST_INFRA', () => {
    expect(chooseInfraMode({ TEST_INFRA: 'local' }, true)).toBe('local');
    expect(chooseInfraMode({ TEST_INFRA: 'containers' }, false)).toBe('containers');
  });
});
