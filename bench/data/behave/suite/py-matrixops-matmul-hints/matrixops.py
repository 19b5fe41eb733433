"""Small dense-matrix helpers for the layout engine.

The engine works with 3x3 affine transforms and a few small systems, so plain
lists of lists are fast enough and keep the package free of dependencies.
A matrix is a list of rows; every row has the same length.
"""

import math
from itertools import starmap
from operator import mul

EPSILON = 1e-12


class ShapeError(ValueError):
    """The matrices' shapes do not fit the operation."""


def shape(m):
    """(rows, columns) of ``m``; ShapeError when the rows differ in length."""
    if not m:
        return (0, 0)
    width = len(m[0])
    if any(len(row) != width for row in m):
        raise ShapeError("ragged matrix")
    return (len(m), width)


def identity(n):
    return [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]


def transpose(m):
    return [list(col) for col in zip(*m)]


def dot(u, v):
    if len(u) != len(v):
        raise ShapeError(f"vectors of length {len(u)} and {len(v)}")
    return sum(starmap(mul, zip(u, v)))


def matmul(a, b):
    rows_a, cols_a = shape(a)
    rows_b, cols_b = shape(b)
    if cols_a != rows_b:
        raise ShapeError(f"cannot multiply {rows_a}x{cols_a} by {rows_b}x{cols_b}")
    cols = transpose(b)
    return [[dot(row, col) for col in cols] for row in a]


def determinant(m):
    """The determinant by Gaussian elimination with partial pivoting."""
    n, width = shape(m)
    if n != width:
        raise ShapeError("determinant of a non-square matrix")
    work = [list(map(float, row)) for row in m]
    det = 1.0
    for i in range(n):
        pivot = max(range(i, n), key=lambda r: abs(work[r][i]))
        if abs(work[pivot][i]) < EPSILON:
            return 0.0
        if pivot != i:
            work[i], work[pivot] = work[pivot], work[i]
            det = -det
        det *= work[i][i]
        for r in range(i + 1, n):
            factor = work[r][i] / work[i][i]
            for c in range(i, n):
                work[r][c] -= factor * work[i][c]
    return det


def rotation(angle):
    """The 3x3 affine transform rotating by ``angle`` radians."""
    c, s = math.cos(angle), math.sin(angle)
    return [[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]]


def translation(dx, dy):
    return [[1.0, 0.0, dx], [0.0, 1.0, dy], [0.0, 0.0, 1.0]]


def format_matrix(m, digits=3):
    return "\n".join(" ".join(f"{x:.{digits}f}" for x in row) for row in m)
