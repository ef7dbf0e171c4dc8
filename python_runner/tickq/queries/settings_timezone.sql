SELECT timezone FROM tickq.settings
