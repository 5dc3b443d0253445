/**
 * Lesson 5's user scenario, as autocannon's request sequence: create a user, then read it back,
 * with a check on each answer's status (201, then 200) counted in `checks.failed`, as a k6 check
 * would. `query` (e.g. 'work=3') is added to both requests.
 */
export function userScenario(checks: { failed: number }, query = '') {
  const q = query ? `?${query}` : '';
  return [
    {
      method: 'POST' as const,
      path: `/users${q}`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ada' }),
      onResponse: (status: number, body: string, context: Record<string, unknown>) => {
        if (status !== 201) checks.failed++;
        context.id = status === 201 ? JSON.parse(body).id : 'missing';
      },
    },
    {
      method: 'GET' as const,
      setupRequest: (req: Record<string, unknown>, context: Record<string, unknown>) => ({
        ...req,
        path: `/users/${context.id ?? 'missing'}${q}`,
      }),
      onResponse: (status: number) => {
        if (status !== 200) checks.failed++;
      },
    },
  ];
}
