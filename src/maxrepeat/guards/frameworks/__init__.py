"""Live guards for agent frameworks, one module a framework, each built on the live
monitor (`guards._live`): ``from maxrepeat.guards.frameworks.<framework> import loop_guard``."""
