"""2-D shapes for the floor-plan editor: points, segments and rectangles.

Coordinates are in centimetres, the y axis points down (screen convention).
"""

import math


class Point:
    """A point of the plan."""

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __repr__(self):
        return f"Point({self.x}, {self.y})"

    def __add__(self, other):
        return Point(self.x + other.x, self.y + other.y)

    def __sub__(self, other):
        return Point(self.x - other.x, self.y - other.y)

    def distance_to(self, other):
        return math.hypot(self.x - other.x, self.y - other.y)

    def snapped(self, grid):
        """The nearest point on a grid of ``grid`` centimetres."""
        return Point(round(self.x / grid) * grid, round(self.y / grid) * grid)


class Segment:
    """A wall segment from ``a`` to ``b``."""

    def __init__(self, a, b):
        self.a = a
        self.b = b

    def length(self):
        return self.a.distance_to(self.b)

    def midpoint(self):
        return Point((self.a.x + self.b.x) / 2, (self.a.y + self.b.y) / 2)

    def is_horizontal(self):
        return self.a.y == self.b.y

    def is_vertical(self):
        return self.a.x == self.b.x


class Rect:
    """An axis-aligned rectangle given by its top-left corner and its size."""

    def __init__(self, left, top, width, height):
        if width < 0 or height < 0:
            raise ValueError("width and height must not be negative")
        self.left = left
        self.top = top
        self.width = width
        self.height = height

    @classmethod
    def from_points(cls, a, b):
        return cls(min(a.x, b.x), min(a.y, b.y), abs(a.x - b.x), abs(a.y - b.y))

    @property
    def corners(self):
        r, b = self.left + self.width, self.top + self.height
        return [Point(self.left, self.top), Point(r, self.top), Point(r, b), Point(self.left, b)]

    def area(self):
        return self.width * self.height

    def contains(self, p):
        return self.left <= p.x <= self.left + self.width and self.top <= p.y <= self.top + self.height

    def intersection(self, other):
        """The overlapping rectangle, or None when they do not overlap."""
        left = max(self.left, other.left)
        top = max(self.top, other.top)
        right = min(self.left + self.width, other.left + other.width)
        bottom = min(self.top + self.height, other.top + other.height)
        if right < left or bottom < top:
            return None
        return Rect(left, top, right - left, bottom - top)


def bounding_box(points):
    xs = [p.x for p in points]
    ys = [p.y for p in points]
    return Rect(min(xs), min(ys), max(xs) - min(xs), max(ys) - min(ys))
