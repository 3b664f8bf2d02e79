-- query: SELECT e.x, e.y FROM e JOIN r ON e.x = r.a
-- plan:
--   Project [v0→v5, v1→v6]
--     Join ON v0 = v2
--       Scan main.e [x→v0, y→v1] protected p:x, p:y
--       Scan main.r [a→v2, b→v3, c→v4] protected r:a
-- grouped: False; slots: [('value', ('v5',)), ('value', ('v6',)), ('column', 2)]
SELECT "v5", "v6", __s2 FROM (SELECT v0 AS "v5", v1 AS "v6", __s0, __s1, __s2 FROM (SELECT l."v0", l."v1", r."v2", r."v3", r."v4", l.__s0, l.__s1, r.__s0 AS __s2 FROM (SELECT "x" AS "v0", "y" AS "v1", "x" AS __s0, "y" AS __s1 FROM "memory"."main"."e") AS l JOIN (SELECT "a" AS "v2", "b" AS "v3", "c" AS "v4", "a" AS __s0 FROM "memory"."main"."r") AS r ON v0 = v2) AS p) AS top
