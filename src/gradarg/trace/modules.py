def draw_modules(record, **kwargs):
    raise NotImplementedError
