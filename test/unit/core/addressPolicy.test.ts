// The address policy behind outgoing requests to user-given URLs (Web Push endpoints): special
// ranges refused, ALLOWED_PRIVATE_ADDRESSES lets chosen ones through, mapped IPv6 is no way around.
import { AddressPolicy } from '../../../services/core/net/addressPolicy.ts';

test('private, loopback, link-local and other special addresses are refused, public ones allowed', () => {
  const p = new AddressPolicy();
  for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0'])
    expect([a, p.permits(a)]).toEqual([a, false]);
  for (const a of ['::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1', 'ff02::1'])
    expect([a, p.permits(a)]).toEqual([a, false]);
  for (const a of ['93.184.216.34', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8'])
    expect([a, p.permits(a)]).toEqual([a, true]);
  expect(p.permits('not-an-ip')).toBe(false);
});

test('ALLOWED_PRIVATE_ADDRESSES opens exactly the listed networks', () => {
  const p = new AddressPolicy(['127.0.0.0/8', '10.9.0.0/16', '::1/128']);
  expect(p.permits('127.0.0.1')).toBe(true);
  expect(p.permits('::ffff:127.0.0.1')).toBe(true);
  expect(p.permits('10.9.3.4')).toBe(true);
  expect(p.permits('10.8.3.4')).toBe(false);
  expect(p.permits('::1')).toBe(true);
  expect(p.permits('192.168.0.1')).toBe(false);
});

test('hostPermitted resolves names', async () => {
  const p = new AddressPolicy();
  expect(await p.hostPermitted('localhost')).toBe(false);
  expect(await p.hostPermitted('[::1]')).toBe(false);
  expect(await new AddressPolicy(['127.0.0.0/8', '::1/128']).hostPermitted('localhost')).toBe(true);
});
