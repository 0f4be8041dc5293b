-- placeholder: the PostgreSQL step 10 comes from the pg branch.
SELECT 1;
