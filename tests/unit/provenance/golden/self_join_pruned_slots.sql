-- query: SELECT e1.x, e2.y FROM e e1 JOIN e e2 ON e1.y = e2.x
-- plan:
--   Project [v0→v4, v3→v5]
--     Join ON v1 = v2
--       Scan main.e [x→v0, y→v1] protected p:x, p:y
--       Scan main.e [x→v2, y→v3] protected p:x, p:y
-- grouped: False; slots: [('value', ('v4',)), ('column', 1), ('drop', 1), ('value', ('v5',))]
SELECT "v4", "v5", __s1 FROM (SELECT v0 AS "v4", v3 AS "v5", __s0, __s1, __s2, __s3 FROM (SELECT l."v0", l."v1", r."v2", r."v3", l.__s0, l.__s1, r.__s0 AS __s2, r.__s1 AS __s3 FROM (SELECT "x" AS "v0", "y" AS "v1", "x" AS __s0, "y" AS __s1 FROM "memory"."main"."e") AS l JOIN (SELECT "x" AS "v2", "y" AS "v3", "x" AS __s0, "y" AS __s1 FROM "memory"."main"."e") AS r ON v1 = v2) AS p) AS top
