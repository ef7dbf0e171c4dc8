SELECT part_from, part_until FROM tickq.simulation_parts(%(until)s::timestamptz, %(start)s::timestamptz)
